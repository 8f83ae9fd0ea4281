package sim

import (
	"errors"
	"testing"
)

// The preemption checks bite: with the loop switched off, a team waits
// below its quota while another borrows; a checkpoint the state lost
// (planted in the run's record of what was saved) is reported.
func TestPreemptionChecksCatchWhatTheyLookFor(t *testing.T) {
	tr, err := Load("testdata/preemption.json")
	if err != nil {
		t.Fatal(err)
	}
	t.Run("no reclaim", func(t *testing.T) {
		sm, err := New(tr)
		if err != nil {
			t.Fatal(err)
		}
		sm.loopOff = true
		if _, err := sm.Run(Check); !errors.Is(err, ErrInvariant) {
			t.Fatalf("run without the loop: %v, want a broken invariant", err)
		}
	})
	t.Run("a checkpoint lost", func(t *testing.T) {
		sm, err := New(tr)
		if err != nil {
			t.Fatal(err)
		}
		planted := false
		_, err = sm.Run(func(sm *Sim) error {
			for id := range sm.ckpt {
				if !planted {
					planted = true
					sm.ckpt[id] = "0000000000000000000000000000000000000000000000000000000000000000"
				}
			}
			return Check(sm)
		})
		if !planted || !errors.Is(err, ErrInvariant) {
			t.Fatalf("planted %v; run: %v, want a broken invariant", planted, err)
		}
	})
}
