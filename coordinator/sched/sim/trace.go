// Package sim is a deterministic scheduler simulator: it drives the real
// state machine (state.Store) with a virtual clock over a trace (teams
// with quotas and weights, a fleet, job arrivals with durations), placing
// work as the scheduler's acquire does, and checks the queueing
// invariants after every step. Traces are JSON files (testdata) or built
// in code (the fleet-scale bench).
package sim

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
)

// ErrBadTrace is wrapped by a trace that cannot be run.
var ErrBadTrace = errors.New("bad trace")

// Trace is what a simulation runs.
type Trace struct {
	Teams []TeamSpec `json:"teams"`
	Fleet []PoolSpec `json:"fleet"`
	Jobs  []JobSpec  `json:"jobs"`
	// Horizon ends the run (seconds of virtual time); 0: when all is done.
	Horizon int `json:"horizon,omitempty"`
	// FairWindow, when set, is checked: over the steps when every team
	// has work waiting, each team's GPU-time is within 5 % of its weight
	// share.
	FairWindow bool `json:"fair_window,omitempty"`
	// Preemption, when set, runs the leader's preemption loop at every
	// step (preempt.go) and checks what it owes.
	Preemption *PreemptionSpec `json:"preemption,omitempty"`
}

// PreemptionSpec tunes the simulated preemption loop: MinRuntime is the
// storm guard, in seconds.
type PreemptionSpec struct {
	MinRuntime int `json:"min_runtime"`
}

// TeamSpec is a team: weight (default 1), quota and borrow limit in GPUs
// (no borrow limit: unbounded).
type TeamSpec struct {
	Name        string   `json:"name"`
	Weight      float64  `json:"weight,omitempty"`
	QuotaGPUs   float64  `json:"quota_gpus,omitempty"`
	BorrowLimit *float64 `json:"borrow_limit_gpus,omitempty"`
}

// PoolSpec is Count workers of GPUs whole GPUs each, MIG of them in MIG
// mode as 7 instances of 1g.10gb.
type PoolSpec struct {
	Prefix string `json:"prefix"`
	Count  int    `json:"count"`
	GPUs   int    `json:"gpus"`
	MIG    int    `json:"mig,omitempty"`
}

// JobSpec is a job arriving at At (seconds), of Count tasks of GPUs
// each (a gang: placed whole), each running Duration seconds; ShareMiB
// asks for a share of one GPU, MIG for one 1g.10gb instance.
type JobSpec struct {
	ID        string `json:"id"`
	Team      string `json:"team"`
	At        int    `json:"at"`
	Count     int    `json:"count"`
	GPUs      int    `json:"gpus,omitempty"`
	ShareMiB  uint64 `json:"share_mib,omitempty"`
	MIG       bool   `json:"mig,omitempty"`
	Gang      bool   `json:"gang,omitempty"`
	Duration  int    `json:"duration"`
	Timeout   int    `json:"timeout,omitempty"`
	Priority  int    `json:"priority,omitempty"`
	NoPreempt bool   `json:"not_preemptible,omitempty"`
	// Grace is the job's preemption grace (seconds): a victim stops that
	// long after it was told to. Checkpoint: each preempted attempt saves
	// a checkpoint as it stops.
	Grace       int  `json:"grace,omitempty"`
	Checkpoint  bool `json:"checkpoint,omitempty"`
	RepeatEvery int  `json:"repeat_every,omitempty"` // a stream: the job again every so many seconds
	Repeats     int  `json:"repeats,omitempty"`
}

// Load reads a trace file.
func Load(path string) (Trace, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Trace{}, err
	}
	var tr Trace
	if err := json.Unmarshal(b, &tr); err != nil {
		return Trace{}, fmt.Errorf("%s: %w: %v", path, ErrBadTrace, err)
	}
	return tr, tr.check()
}

func (tr Trace) check() error {
	if len(tr.Fleet) == 0 || len(tr.Jobs) == 0 {
		return fmt.Errorf("a trace needs a fleet and jobs: %w", ErrBadTrace)
	}
	for _, j := range tr.Jobs {
		if j.ID == "" || j.Count < 1 || j.Duration < 1 || j.Team == "" {
			return fmt.Errorf("job %q: needs an id, a team, count >= 1 and duration >= 1: %w", j.ID, ErrBadTrace)
		}
	}
	return nil
}
