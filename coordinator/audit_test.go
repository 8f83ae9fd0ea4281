package coordinator_test

// The audit log (seed 000's known gap: no audit beyond lifecycle events):
// replicated, append-only, every credential and enrollment decision, and
// every refused authentication, coalesced so that refusals cannot become
// a stream of Raft writes.

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator"
	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/coordinator/state/audit"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// countRefusals adds up the refused authentications events stand for.
func countRefusals(events []api.AuditEvent) int {
	n := 0
	for _, ev := range events {
		if ev.Kind == "auth.refused" {
			n += max(ev.Count, 1)
		}
	}
	return n
}

func TestAuditTrailOfAScenario(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{Tweak: func(c *coordinator.Config) {
		behindLoopbackProxy(c)
		c.AuditFlush = 50 * time.Millisecond
	}})
	ctx := t.Context()
	sc := &securityScenario{t: t, admin: h.Client(t, h.AdminToken), urls: []string{h.URL}, dataDirs: []string{h.DataDir}}
	start := time.Now().UTC()
	sc.run(h.AdminToken, h.JoinToken)
	admin := sc.admin // now holds the rotated admin token

	wantKinds := []string{
		"credentials.imported", "token.created", "group.created", "worker.registered", "worker.approved",
		"cluster.created", "enrollment.created", "enrollment.refused", "enrollment.accepted", "job.cancelled",
		"group.member_added", "group.member_removed", "artifact.stored", "worker.reissued", "auth.refused",
		"token.revoked", "worker.revoked", "enrollment.revoked", "credentials.rotated",
	}
	var all []api.AuditEvent
	coordinatortest.WaitFor(t, 10*time.Second, "every kind of event in the audit log", func() bool {
		page, err := admin.Audit(ctx, client.AuditQuery{Limit: 10000})
		if err != nil {
			t.Fatal(err)
		}
		all = page.Events
		seen := map[string]bool{}
		for _, ev := range all {
			seen[ev.Kind] = true
		}
		for _, k := range wantKinds {
			if !seen[k] {
				return false
			}
		}
		// Refusals are coalesced and flushed apart (AuditFlush): wait
		// until the scenario's have all been written, not only the first.
		return countRefusals(all) >= 2*len(sc.tokens)
	})
	raw, _ := json.Marshal(all)
	if leaked := secretsIn(raw, sc.tokens); len(leaked) > 0 {
		t.Fatalf("the audit log holds secrets of %v", leaked)
	}
	var refusals, byForbidden int
	for i, ev := range all {
		if i > 0 && ev.Seq <= all[i-1].Seq {
			t.Fatalf("sequence not increasing at %d: %d after %d", i, ev.Seq, all[i-1].Seq)
		}
		at, err := api.ParseTime(ev.Time)
		if err != nil || at.Before(start.Add(-time.Minute)) {
			t.Fatalf("event %d time %q", ev.Seq, ev.Time)
		}
		if ev.Kind == "auth.refused" {
			if ev.Route == "" || ev.Code == "" || ev.Source == "" {
				t.Fatalf("refusal without route, code or source: %+v", ev)
			}
			refusals += max(ev.Count, 1)
			if ev.Code == string(api.CodeForbidden) && ev.CredentialID != "" {
				byForbidden++
			}
		}
	}
	if refusals < 2*len(sc.tokens) || byForbidden == 0 {
		t.Fatalf("%d refusals audited (%d forbidden with a credential id), want at least %d", refusals, byForbidden, 2*len(sc.tokens))
	}
	var accepted api.AuditEvent
	for _, ev := range all {
		if ev.Kind == "enrollment.accepted" {
			accepted = ev
		}
	}
	if accepted.Source != "203.0.113.50" || accepted.WorkerID != "vm" || accepted.Subject != "scenario-vm" {
		t.Fatalf("enrollment audited as %+v", accepted)
	}

	// Filters: by area and kind, by time, paging.
	page, err := admin.Audit(ctx, client.AuditQuery{Kinds: []string{"token", "worker.approved"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range page.Events {
		if ev.Kind != "token.created" && ev.Kind != "token.revoked" && ev.Kind != "worker.approved" {
			t.Fatalf("kind filter let %s through", ev.Kind)
		}
	}
	if len(page.Events) < 5 {
		t.Fatalf("kind filter found %d events", len(page.Events))
	}
	if late, _ := admin.Audit(ctx, client.AuditQuery{Since: time.Now().Add(time.Hour)}); len(late.Events) != 0 {
		t.Fatalf("since filter: %d events from the future", len(late.Events))
	}
	if early, _ := admin.Audit(ctx, client.AuditQuery{Until: start.Add(-time.Hour)}); len(early.Events) != 0 {
		t.Fatalf("until filter: %d events", len(early.Events))
	}
	first, _ := admin.Audit(ctx, client.AuditQuery{Limit: 3})
	next, _ := admin.Audit(ctx, client.AuditQuery{After: first.NextAfter, Limit: 3})
	if len(first.Events) != 3 || first.NextAfter != first.Events[2].Seq || next.Events[0].Seq <= first.NextAfter {
		t.Fatalf("paging: %+v then %+v", first, next)
	}
	// Only admins read it.
	nosy, err := admin.CreateToken(ctx, api.CreateTokenRequest{Kind: "client", Name: "nosy", Roles: []string{"submit"}})
	if err != nil {
		t.Fatal(err)
	}
	wantCode(t, "submit role reads the audit log", call(t, h.URL, "GET", "/v1/audit", nosy.Token, nil, nil), 403, api.CodeForbidden)
	wantCode(t, "bad since", call(t, h.URL, "GET", "/v1/audit?since=yesterday", sc.tokens[len(sc.tokens)-2], nil, nil), 400, api.CodeInvalidArgument)
}

// A flood of refused requests costs a handful of Raft entries: refusals
// are coalesced per source, route, code and credential, with a count.
func TestRefusedAuthenticationIsCoalesced(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{Tweak: behindLoopbackProxy})
	forged := "glc_0123456789abcdef_" + strings.Repeat("0", 62) + "ff"
	before := h.Server.Node().Raft().AppliedIndex()
	const n = 400
	for range n {
		call(t, h.URL, "GET", "/v1/jobs", forged, nil, from("198.51.100.66"))
	}
	var evs []command.AuditEvent
	coordinatortest.WaitFor(t, 10*time.Second, "the refusals to be audited", func() bool {
		evs = h.Server.Store().Audit(audit.Filter{Kinds: []string{"auth.refused"}})
		total := 0
		for _, ev := range evs {
			total += ev.Count
		}
		return total == n
	})
	for _, ev := range evs {
		if ev.Source != "198.51.100.66" || ev.CredentialID != "0123456789abcdef" || ev.Code != string(api.CodeUnauthenticated) || ev.Route != "GET /v1/jobs" {
			t.Fatalf("refusal event %+v", ev)
		}
	}
	if len(evs) > 20 {
		t.Fatalf("%d refusals took %d audit events; they should be coalesced", n, len(evs))
	}
	if grew := h.Server.Node().Raft().AppliedIndex() - before; grew > 20 {
		t.Fatalf("%d refusals cost %d Raft entries", n, grew)
	}
}
