package preemption

import (
	"errors"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/state/record"
	"github.com/gpulayer/gpulayer/coordinator/state/stateerr"
)

// borrowing is a fleet where team ml (no quota) runs m-0 on one GPU of
// w1 and m2-0 on the other, both since t0, and team research (quota: one
// GPU) waits with r-0, asking for one GPU at priority 5.
func borrowing() (*fleet, *record.Task, *record.Job) {
	f := newFleet()
	w := f.worker("w1", 2)
	f.quota["research"] = 100
	f.busy(w, "m", "ml", 0, 0)
	f.busy(w, "m2", "ml", 0, 1)
	pj := f.job("r", "research", 1, 5, 1)
	return f, f.tasks["r-0"], pj
}

func TestVictimErrFollowsThePolicy(t *testing.T) {
	no := false
	cases := []struct {
		name string
		edit func(f *fleet, pj *record.Job)
		min  time.Duration
		want error
	}{
		{"borrowed by a team over its quota, for a team under its own", func(*fleet, *record.Job) {}, time.Minute, nil},
		{"the preemptor's team already holds its quota", func(f *fleet, _ *record.Job) { f.quota["research"] = 0 }, time.Minute, ErrNotBorrowing},
		{"the victim's team within its quota", func(f *fleet, _ *record.Job) { f.quota["ml"] = 200 }, time.Minute, ErrNotBorrowing},
		{"own team, lower priority", func(f *fleet, pj *record.Job) { pj.Team = "ml"; f.quota["ml"] = 200 }, time.Minute, nil},
		{"own team, the same priority", func(f *fleet, pj *record.Job) { pj.Team, pj.Spec.Priority = "ml", 0 }, time.Minute, ErrNotBorrowing},
		{"a job that may not be preempted", func(f *fleet, _ *record.Job) { f.jobs["m"].Spec.Preemptible = &no }, time.Minute, ErrNotPreemptible},
		{"younger than the minimum runtime", func(*fleet, *record.Job) {}, 2 * time.Hour, ErrTooYoung},
		{"already told to stop", func(f *fleet, _ *record.Job) { f.tasks["m-0"].Preempt = "drained" }, time.Minute, ErrStopping},
		{"cancelled", func(f *fleet, _ *record.Job) { f.tasks["m-0"].CancelRequested = true }, time.Minute, ErrStopping},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, p, pj := borrowing()
			c.edit(f, pj)
			err := VictimErr(f, p, pj, f.tasks["m-0"], NewRound(), c.min, t0.Add(time.Hour))
			if !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
				t.Fatalf("VictimErr = %v, want %v", err, c.want)
			}
			if err != nil && !errors.Is(err, stateerr.ErrConflict) {
				t.Fatalf("%v does not wrap ErrConflict: an apply refusing it would not answer a conflict", err)
			}
		})
	}
}

// A round counts what its victims hold: once ml's borrowing is taken back
// down to its quota, its other task is no victim for another team.
func TestRoundTakesBorrowingBack(t *testing.T) {
	f, p, pj := borrowing()
	f.quota["ml"] = 100 // ml borrows one GPU of its two
	r := NewRound()
	now := t0.Add(time.Hour)
	if err := VictimErr(f, p, pj, f.tasks["m-0"], r, time.Minute, now); err != nil {
		t.Fatalf("first victim: %v", err)
	}
	gone := map[string]bool{}
	if took := r.Take(f, gone, f.tasks["m-0"]); len(took) != 1 || !gone["m-0"] {
		t.Fatalf("Take = %v, gone %v", took, gone)
	}
	if err := VictimErr(f, p, pj, f.tasks["m2-0"], r, time.Minute, now); !errors.Is(err, ErrNotBorrowing) {
		t.Fatalf("second victim: %v, want ErrNotBorrowing (ml is within its quota once m-0 is taken)", err)
	}
}

// A running gang is a victim whole: a member not running makes it none,
// and taking one member takes every member, wherever it runs.
func TestGangVictimIsWhole(t *testing.T) {
	f := newFleet()
	w1, w2 := f.worker("w1", 1), f.worker("w2", 1)
	f.quota["research"] = 200
	f.job("g", "ml", 1, 0, 2)
	f.run("g-0", w1, t0, 0)
	f.run("g-1", w2, t0, 0)
	pj := f.job("r", "research", 1, 5, 1)
	now := t0.Add(time.Hour)
	r := NewRound()
	gone := map[string]bool{}
	if err := VictimErr(f, f.tasks["r-0"], pj, f.tasks["g-1"], r, time.Minute, now); err != nil {
		t.Fatalf("gang victim: %v", err)
	}
	if took := r.Take(f, gone, f.tasks["g-1"]); len(took) != 2 || took[0].ID != "g-0" || !gone["g-0"] || !gone["g-1"] {
		t.Fatalf("Take = %v: want both members by rank", took)
	}
	f.tasks["g-0"].State = record.TaskPending
	f.tasks["g-0"].Attempts = nil
	if err := VictimErr(f, f.tasks["r-0"], pj, f.tasks["g-1"], NewRound(), time.Minute, now); !errors.Is(err, ErrStopping) {
		t.Fatalf("gang with a member not running: %v, want ErrStopping", err)
	}
}
