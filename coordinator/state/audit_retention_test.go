package state

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/audit"
)

// randomRefusals is one flush worth of refusals as an anonymous flood
// produces them: random credential ids from many sources.
func randomRefusals(rng *rand.Rand, n int) []command.AuditEvent {
	evs := make([]command.AuditEvent, n)
	for i := range evs {
		evs[i] = command.AuditEvent{
			Time: t0, Kind: "auth.refused", Code: "unauthenticated", Route: "GET /v1/jobs", CredentialKind: "client",
			CredentialID: fmt.Sprintf("%016x", rng.Uint64()),
			Source:       fmt.Sprintf("203.0.%d.%d", rng.IntN(256), rng.IntN(256)),
		}
	}
	return evs
}

// Finding 5: a flood of refused authentications (more events than the
// whole audit log keeps) must not evict what credentialed callers did.
// Before the refusal ring, 100,000 refusals pushed the token.created and
// worker.approved events out.
func TestRefusalFloodEvictsNoOtherEvent(t *testing.T) {
	s := New()
	s.Apply(command.ImportBootstrap{Generation: 1, Credentials: []command.CredentialRecord{cred("adm", "client")}, Now: t0})
	if res := s.Apply(command.CreateToken{Credential: cred("tok1", "join"), Now: t0}).(Result); res.Err() != nil {
		t.Fatal(res.Err())
	}
	before := s.Audit(audit.Filter{})
	if len(before) == 0 {
		t.Fatal("creating a token audited nothing")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	flood := audit.MaxEvents + audit.MaxEvents/4
	for sent := 0; sent < flood; sent += audit.MaxBatch {
		if res := s.Apply(command.AppendAudit{Events: randomRefusals(rng, audit.MaxBatch)}).(Result); res.Err() != nil {
			t.Fatal(res.Err())
		}
	}
	// Refusals recorded by the state machine itself (a used-up join
	// token presented at registration) join the same ring.
	for i := range 2 * audit.MaxRefusals {
		s.audit.Record(command.AuditEvent{Time: t0, Kind: "auth.refused", Code: "forbidden", Subject: fmt.Sprint(i)})
	}

	events, refusals := s.AuditSizes()
	if refusals > audit.MaxRefusals+audit.MaxRefusals/8 {
		t.Fatalf("%d refusals kept, bound %d", refusals, audit.MaxRefusals)
	}
	if events != len(before) {
		t.Fatalf("%d non-refusal events after the flood, want the %d from before", events, len(before))
	}
	for _, want := range before {
		got := s.Audit(audit.Filter{After: want.Seq - 1, Limit: 1})
		if len(got) != 1 || got[0] != want {
			t.Fatalf("event %d (%s) was evicted by the flood: %+v", want.Seq, want.Kind, got)
		}
	}
	tok := s.Audit(audit.Filter{Kinds: []string{"token"}})
	if len(tok) != 1 || tok[0].Kind != "token.created" {
		t.Fatalf("token events after the flood: %+v", tok)
	}
}

// Events of both rings come back as one log ordered by sequence, and
// paging and kind filters see both.
func TestAuditMergesBothRings(t *testing.T) {
	s := New()
	kinds := []string{"token.created", "auth.refused", "auth.refused", "group.created", "enrollment.refused", "token.revoked"}
	for _, k := range kinds {
		s.audit.Record(command.AuditEvent{Time: t0, Kind: k})
	}
	all := s.Audit(audit.Filter{})
	if len(all) != len(kinds) {
		t.Fatalf("%d events, want %d", len(all), len(kinds))
	}
	for i, ev := range all {
		if ev.Seq != uint64(i+1) || ev.Kind != kinds[i] {
			t.Fatalf("event %d: %+v, want seq %d kind %s", i, ev, i+1, kinds[i])
		}
	}
	cases := []struct {
		name string
		f    audit.Filter
		want []uint64
	}{
		{"page across rings", audit.Filter{After: 1, Limit: 3}, []uint64{2, 3, 4}},
		{"refusal kinds", audit.Filter{Kinds: []string{"auth", "enrollment"}}, []uint64{2, 3, 5}},
		{"token area", audit.Filter{Kinds: []string{"token"}}, []uint64{1, 6}},
		{"until excludes all", audit.Filter{Until: t0}, nil},
	}
	for _, c := range cases {
		var got []uint64
		for _, ev := range s.Audit(c.f) {
			got = append(got, ev.Seq)
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s: seqs %v, want %v", c.name, got, c.want)
		}
	}
}

// Both rings survive a snapshot byte for byte; a snapshot from before the
// rings were split (refusals among the other events) restores with each
// event in its ring and its sequence number unchanged.
func TestAuditRingsSnapshot(t *testing.T) {
	s := New()
	for _, k := range []string{"token.created", "auth.refused", "group.created"} {
		s.audit.Record(command.AuditEvent{Time: t0, Kind: k})
	}
	s.Apply(command.AppendAudit{Events: []command.AuditEvent{{Time: t0, Kind: "auth.refused", Count: 7}}})
	roundTrip(t, s)
	snap := encodeV1(t, s.Capture())

	var old map[string]json.RawMessage
	if err := json.Unmarshal(snap, &old); err != nil {
		t.Fatal(err)
	}
	mixed := []command.AuditEvent{
		{Seq: 1, Time: t0, Kind: "token.created"}, {Seq: 2, Time: t0, Kind: "auth.refused"},
		{Seq: 3, Time: t0, Kind: "group.created"}, {Seq: 4, Time: t0, Kind: "enrollment.refused"},
	}
	old["audit"], _ = json.Marshal(mixed)
	delete(old, "audit_refusals")
	old["audit_seq"] = json.RawMessage("4")
	raw, _ := json.Marshal(old)
	o := New()
	if err := o.Restore(bytes.NewReader(raw)); err != nil {
		t.Fatal(err)
	}
	events, refusals := o.AuditSizes()
	if events != 2 || refusals != 2 {
		t.Fatalf("old snapshot split into %d events and %d refusals, want 2 and 2", events, refusals)
	}
	got := o.Audit(audit.Filter{})
	for i, ev := range got {
		if ev.Seq != mixed[i].Seq || ev.Kind != mixed[i].Kind {
			t.Fatalf("restored event %d: %+v, want %+v", i, ev, mixed[i])
		}
	}
	o.audit.Record(command.AuditEvent{Time: t0.Add(time.Second), Kind: "token.revoked"})
	if last := o.Audit(audit.Filter{After: 4}); len(last) != 1 || last[0].Seq != 5 {
		t.Fatalf("sequence after restoring an old snapshot: %+v", last)
	}
}
