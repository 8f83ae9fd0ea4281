package sim

import (
	"errors"
	"path/filepath"
	"testing"
)

// Every recorded trace runs to its end with every invariant holding
// after every step, places all its work (within its horizon, the work
// it could), is deterministic (two runs assign the same tasks to the
// same devices at the same times), and, where asked, gives each team its
// weight share of GPU-time within 5 % while all wait.
func TestTraces(t *testing.T) {
	paths, err := filepath.Glob("testdata/*.json")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no traces: %v", err)
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			tr, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			first := runTrace(t, tr)
			again := runTrace(t, tr)
			if first.Digest != again.Digest || first.Placements != again.Placements {
				t.Fatalf("two runs differ: %s/%d and %s/%d placements", first.Digest, first.Placements, again.Digest, again.Placements)
			}
			want := 0
			for _, j := range tr.Jobs {
				want += j.Count * max(j.Repeats, 1)
			}
			// A preempted attempt's task is placed again: each counts once.
			if tr.Horizon == 0 && first.Placements-first.Requeued != want {
				t.Fatalf("placed %d tasks of %d (%d placed again after a preemption)", first.Placements-first.Requeued, want, first.Requeued)
			}
			if tr.Preemption != nil && (first.Preemptions == 0 || first.Restored == 0) {
				t.Fatalf("a trace under preemption pressure preempted %d times and resumed %d tasks from a checkpoint", first.Preemptions, first.Restored)
			}
			if tr.FairWindow {
				shares, worst := first.Fairness(tr.Teams)
				if worst > 0.05 || len(shares) != len(tr.Teams) {
					t.Fatalf("shares of GPU-time %v: %.1f %% off the weights", shares, 100*worst)
				}
			}
			t.Logf("%d placements in %d steps, utilization %.3f, %d preemptions (%d attempts requeued, %d resumed from a checkpoint), digest %s",
				first.Placements, first.Steps, first.Utilization(), first.Preemptions, first.Requeued, first.Restored, first.Digest)
		})
	}
}

func runTrace(t *testing.T, tr Trace) Report {
	t.Helper()
	sm, err := New(tr)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := sm.Run(Check)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// The checks catch what they look for: a team over its ceiling and a
// gang partly placed, planted in a run's bookkeeping, are reported.
func TestCheckCatchesBrokenInvariants(t *testing.T) {
	tr, err := Load("testdata/quota.json")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		plant func(sm *Sim)
	}{
		{"a team over its ceiling", func(sm *Sim) {
			sm.running["planted"] = run{job: JobSpec{ID: "x", Team: "speech", GPUs: 20}, worker: "w0000", ends: 1 << 30}
		}},
		{"a gang partly placed", func(sm *Sim) {
			sm.running["planted"] = run{job: JobSpec{ID: "i-mig", Team: "infra", Gang: true}, worker: "w0000", ends: 1 << 30}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sm, err := New(tr)
			if err != nil {
				t.Fatal(err)
			}
			planted := false
			_, err = sm.Run(func(sm *Sim) error {
				if !planted && sm.now >= 1 {
					planted = true
					tc.plant(sm)
				}
				return Check(sm)
			})
			if !errors.Is(err, ErrInvariant) {
				t.Fatalf("run: %v, want a broken invariant", err)
			}
		})
	}
}

// A trace without a fleet or with a job of no duration is refused.
func TestBadTrace(t *testing.T) {
	for _, tr := range []Trace{
		{Jobs: []JobSpec{{ID: "j", Team: "a", Count: 1, Duration: 1}}},
		{Fleet: []PoolSpec{{Prefix: "w", Count: 1, GPUs: 1}}, Jobs: []JobSpec{{ID: "j", Team: "a", Count: 1}}},
	} {
		if _, err := New(tr); !errors.Is(err, ErrBadTrace) {
			t.Fatalf("%+v: %v, want a bad trace", tr, err)
		}
	}
}
