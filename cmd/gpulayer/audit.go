package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// parseWhen takes an RFC 3339 time or a duration meaning "that long ago".
func parseWhen(flagName, s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(s); err == nil {
		return now.Add(-d), nil
	}
	return time.Time{}, usagef("--%s %q: want an RFC 3339 time or a duration such as 24h", flagName, s)
}

func auditCmd() *cobra.Command {
	var cf clientFlags
	var out outputFlags
	var since, until, kind string
	var limit int
	cmd := &cobra.Command{
		Use:   "audit [flags]",
		Short: "print the audit log (admin)",
		Long: `audit prints the audit log, oldest first. With --limit N it prints the
newest N events (still oldest first, as tail does). -o json prints one
event a line.`,
		Example: `  gpulayer audit --since 24h
  gpulayer audit --kind token,auth.refused --limit 20
  gpulayer audit -o json | jq .kind`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var q client.AuditQuery
			var err error
			t := time.Now()
			if q.Since, err = parseWhen("since", since, t); err != nil {
				return err
			}
			if q.Until, err = parseWhen("until", until, t); err != nil {
				return err
			}
			if limit < 0 {
				return usagef("--limit must not be negative")
			}
			q.Kinds = splitList(kind)
			c, err := cf.client(cmd.Flags())
			if err != nil {
				return err
			}
			return printAudit(cmd.Context(), c, q, limit, &out)
		},
	}
	fs := cmd.Flags()
	cf.register(fs)
	out.register(fs)
	fs.StringVar(&since, "since", "", "from this time (RFC 3339) or this long ago (e.g. 24h)")
	fs.StringVar(&until, "until", "", "before this time (RFC 3339) or this long ago")
	fs.StringVar(&kind, "kind", "", "kinds or areas, comma separated (token, worker.approved, auth.refused, …)")
	fs.IntVar(&limit, "limit", 0, "print only the newest N events (0: all)")
	return cmd
}

// printAudit follows the log's pages to the end, printing each event as it
// comes; with limit, it keeps the newest limit events and prints them at
// the end.
func printAudit(ctx context.Context, c *client.Client, q client.AuditQuery, limit int, out *outputFlags) error {
	wide := out.is(formatWide)
	tw := newTable(humanOut)
	if !out.is(formatJSON) {
		auditRow(tw, nil, wide)
	}
	emit := func(ev api.AuditEvent) error {
		if out.is(formatJSON) {
			return printJSONLine(ev)
		}
		auditRow(tw, &ev, wide)
		return nil
	}
	var newest []api.AuditEvent // with limit: the newest limit events so far
	for {
		q.Limit = 1000
		page, err := c.Audit(ctx, q)
		if err != nil {
			return err
		}
		for _, ev := range page.Events {
			if limit == 0 {
				if err := emit(ev); err != nil {
					return err
				}
				continue
			}
			if newest = append(newest, ev); len(newest) > limit {
				newest = newest[1:]
			}
		}
		if page.NextAfter == 0 {
			break
		}
		q.After = page.NextAfter
	}
	for _, ev := range newest {
		if err := emit(ev); err != nil {
			return err
		}
	}
	return tw.Flush()
}

// auditRow writes one event as a table row, or the header when ev is nil.
func auditRow(w io.Writer, ev *api.AuditEvent, wide bool) {
	if ev == nil {
		head := []string{"SEQ", "TIME", "KIND", "ACTOR", "SUBJECT", "SOURCE", "DETAIL"}
		if wide {
			head = append(head, "CREDENTIAL", "WORKER")
		}
		row(w, head...)
		return
	}
	cells := []string{fmt.Sprint(ev.Seq), ev.Time, ev.Kind, dash(actorOf(*ev)), dash(ev.Subject), dash(ev.Source), describe(*ev)}
	if wide {
		cred := ""
		if ev.CredentialID != "" {
			cred = ev.CredentialKind + ":" + ev.CredentialID
		}
		cells = append(cells, dash(cred), dash(ev.WorkerID))
	}
	row(w, cells...)
}

func actorOf(ev api.AuditEvent) string {
	if ev.Actor != "" {
		return ev.Actor
	}
	if ev.CredentialID != "" {
		return ev.CredentialKind + ":" + ev.CredentialID
	}
	return ev.WorkerID
}

func describe(ev api.AuditEvent) string {
	var parts []string
	if ev.Route != "" {
		parts = append(parts, ev.Route)
	}
	if ev.Code != "" {
		parts = append(parts, ev.Code)
	}
	if ev.Detail != "" {
		parts = append(parts, ev.Detail)
	}
	if ev.Count > 1 {
		parts = append(parts, fmt.Sprintf("×%d", ev.Count))
	}
	return dash(strings.Join(parts, "; "))
}
