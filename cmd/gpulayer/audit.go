package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

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
	return time.Time{}, fmt.Errorf("--%s %q: want an RFC 3339 time or a duration such as 24h", flagName, s)
}

// auditList prints the audit log, oldest first, following pages to the
// end (or --limit events).
func auditList(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("audit", flag.ContinueOnError)
	var cf clientFlags
	cf.register(fs)
	since := fs.String("since", "", "from this time (RFC 3339) or this long ago (e.g. 24h)")
	until := fs.String("until", "", "before this time (RFC 3339) or this long ago")
	kind := fs.String("kind", "", "kinds or areas, comma separated (token, worker.approved, auth.refused, …)")
	limit := fs.Int("limit", 0, "most events to print (0: all)")
	asJSON := fs.Bool("json", false, "print JSON, one event per line")
	if err := fs.Parse(args); err != nil {
		return err
	}
	now := time.Now()
	var q client.AuditQuery
	var err error
	if q.Since, err = parseWhen("since", *since, now); err != nil {
		return err
	}
	if q.Until, err = parseWhen("until", *until, now); err != nil {
		return err
	}
	q.Kinds = splitList(*kind)
	c, err := cf.client()
	if err != nil {
		return err
	}
	var tw *tabwriter.Writer
	if !*asJSON {
		tw = tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "SEQ\tTIME\tKIND\tACTOR\tSUBJECT\tSOURCE\tDETAIL")
	}
	printed := 0
	for {
		q.Limit = 1000
		if *limit > 0 {
			q.Limit = min(1000, *limit-printed)
		}
		page, err := c.Audit(ctx, q)
		if err != nil {
			return err
		}
		for _, ev := range page.Events {
			if *asJSON {
				if err := printJSONLine(ev); err != nil {
					return err
				}
			} else {
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", ev.Seq, ev.Time, ev.Kind, dash(actorOf(ev)), dash(ev.Subject), dash(ev.Source), describe(ev))
			}
		}
		printed += len(page.Events)
		if page.NextAfter == 0 || (*limit > 0 && printed >= *limit) {
			break
		}
		q.After = page.NextAfter
	}
	if tw != nil {
		return tw.Flush()
	}
	return nil
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
