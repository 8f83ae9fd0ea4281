package state

import (
	"errors"
	"fmt"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/command"
)

// A job's spec digest is taken by the leader (SubmitJob.SpecHash) and
// kept as given; an entry from before it was carried gets the legacy
// digest from the replica itself, and a job recorded under one kind of
// digest is found again by a submit carrying the other: the idempotency
// check holds across an upgrade.
func TestSubmitKeepsTheLeadersSpecHash(t *testing.T) {
	spec := command.JobSpec{Executor: "exec", Config: []byte(`{ "command" : "true" }`), IdempotencyKey: "k1"}
	other := spec
	other.Priority = 3
	for _, tc := range []struct {
		name          string
		first, second func(command.JobSpec) string // the digest each submit carries
	}{
		{"both carried", command.SpecDigest, command.SpecDigest},
		{"recorded legacy, retried carried", func(command.JobSpec) string { return "" }, command.SpecDigest},
		{"recorded carried, retried legacy", command.SpecDigest, func(command.JobSpec) string { return "" }},
		{"legacy digests carried", command.LegacySpecDigest, command.SpecDigest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := New()
			mustApply(t, s, command.SubmitJob{JobID: "j1", TaskIDs: []string{"j1-0"}, Spec: spec, CreatedBy: "alice", Now: at(1), SpecHash: tc.first(spec)})
			if j := s.jobs.Get("j1"); j.SpecHash == "" || (tc.first(spec) != "" && j.SpecHash != tc.first(spec)) {
				t.Fatalf("stored %q", j.SpecHash)
			}
			r := apply(t, s, command.SubmitJob{JobID: "j2", TaskIDs: []string{"j2-0"}, Spec: spec, CreatedBy: "alice", Now: at(2), SpecHash: tc.second(spec)})
			out, err := OutcomeOf[SubmitOutcome](r)
			if err != nil || out.Created || out.Job.Job.ID != "j1" {
				t.Fatalf("resubmission: %+v %v", out, err)
			}
			// Another spec under the key: refused, whoever took the digest.
			r = apply(t, s, command.SubmitJob{JobID: "j3", TaskIDs: []string{"j3-0"}, Spec: other, CreatedBy: "alice", Now: at(3), SpecHash: tc.second(other)})
			if !errors.Is(r.Err(), ErrConflict) {
				t.Fatalf("another spec under the key: %v", r.Err())
			}
		})
	}
}

// BenchmarkApplySubmit applies job submissions as a replica does, with
// the digest the leader took (carried) and without it (hashed in Apply,
// as before).
func BenchmarkApplySubmit(b *testing.B) {
	spec := command.JobSpec{Executor: "exec", Config: []byte(`{"command":"python train.py --epochs 3","env":{"A":"1","B":"2"}}`),
		Resources: &command.Resources{GPUs: 1}, MaxAttempts: 3, LeaseSeconds: 60}
	for _, carried := range []bool{true, false} {
		b.Run(fmt.Sprintf("carried=%v", carried), func(b *testing.B) {
			s := New()
			hash := ""
			if carried {
				hash = command.SpecDigest(spec)
			}
			i := 0
			for b.Loop() {
				i++
				id := fmt.Sprintf("j%d", i)
				s.Apply(command.SubmitJob{JobID: id, TaskIDs: []string{id + "-0"}, Spec: spec, CreatedBy: "bench", Now: at(1), SpecHash: hash})
			}
		})
	}
}
