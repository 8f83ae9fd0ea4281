package coordinator_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator"
	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/coordinator/state/audit"
)

// Finding 5: random credential ids defeated coalescing (each id its own
// event, ~257 a second), and refusals shared one ring with everything
// else, so a flood evicted credential and admin events within minutes.
// Now a flood of forged tokens from many sources is one summary per
// source and interval, and the event an admin caused before it stays.
func TestRefusalFloodWithRandomIDs(t *testing.T) {
	const flush = 200 * time.Millisecond
	h := coordinatortest.Start(t, coordinatortest.Options{Tweak: func(c *coordinator.Config) { c.AuditFlush = flush }})
	mintClient(t, h, "before-the-flood", "read")
	before := h.Server.Store().Audit(audit.Filter{Kinds: []string{"token.created"}})
	if len(before) == 0 {
		t.Fatal("creating a token was not audited")
	}
	created := before[len(before)-1]

	const sources, perSource = 8, 150
	rng := rand.New(rand.NewPCG(7, 9))
	start := time.Now()
	for i := range sources * perSource {
		forged := fmt.Sprintf("glc_%016x_%064x", rng.Uint64(), rng.Uint64())
		r := call(t, h.URL, "GET", "/v1/jobs", forged, nil, from(fmt.Sprintf("198.51.100.%d", i%sources)))
		if r.status != 401 {
			t.Fatalf("a forged token got %d %s", r.status, r.raw)
		}
	}
	elapsed := time.Since(start)

	var refusals []command.AuditEvent
	coordinatortest.WaitFor(t, 10*time.Second, "every refusal to be counted", func() bool {
		refusals = h.Server.Store().Audit(audit.Filter{Kinds: []string{"auth.refused"}})
		total := 0
		for _, ev := range refusals {
			total += ev.Count
		}
		return total == sources*perSource
	})
	// At most one summary per source per flush interval the flood spanned
	// (plus the interval it started in and the one it ended in).
	intervals := int(elapsed/flush) + 2
	t.Logf("%d refusals from %d sources in %v: %d audit events", sources*perSource, sources, elapsed.Round(time.Millisecond), len(refusals))
	if len(refusals) > sources*intervals {
		t.Fatalf("%d refusals with random ids took %d events; want at most %d (%d sources × %d intervals)",
			sources*perSource, len(refusals), sources*intervals, sources, intervals)
	}
	for _, ev := range refusals {
		if ev.Count > 1 && (ev.CredentialID != "" || !strings.Contains(ev.Detail, "distinct ids presented")) {
			t.Fatalf("a summary of random ids: %+v", ev)
		}
	}
	got := h.Server.Store().Audit(audit.Filter{After: created.Seq - 1, Limit: 1})
	if len(got) != 1 || got[0] != created {
		t.Fatalf("the token.created event from before the flood: %+v", got)
	}
}
