package command

import "time"

// PreemptTasks stops the attempts of Victims, all on WorkerID, so that
// the pending task For can run there (state/preempt.go), and holds the
// devices they free for For until HoldUntil. The leader decides it from
// the replicated state (state.PlanPreemption); the state machine checks
// it again against the state it applies to, so a stale decision is
// refused whole. MinRuntime is the leader's storm guard: no victim whose
// attempt has run less than that. A command with no For only releases
// holds that expired at Now.
type PreemptTasks struct {
	For        string        `json:"for,omitempty"`
	WorkerID   string        `json:"worker_id,omitempty"`
	Victims    []Victim      `json:"victims,omitempty"`
	MinRuntime time.Duration `json:"min_runtime"`
	HoldUntil  time.Time     `json:"hold_until,omitzero"`
	Now        time.Time     `json:"now"`
}

// Victim is one attempt a PreemptTasks stops.
type Victim struct {
	TaskID    string `json:"task_id"`
	AttemptID string `json:"attempt_id"`
}

func (PreemptTasks) Type() Type { return TypePreemptTasks }
