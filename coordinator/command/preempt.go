package command

import "time"

// PreemptTasks stops the attempts of Victims so that the pending task
// For can run (state/preempt.go), and holds the devices they free for
// For until HoldUntil. A victim names its worker, or is on WorkerID
// (every victim of a command written before victims named theirs). For
// a gang member, the preemption is for the whole gang, and its victims
// may be on several workers; a victim that is a gang member is named
// with every other running member of its gang. The leader decides it from
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
	// TeamRoom marks a decision that counted For's team's room: a task its
	// team's ceiling holds back is not placeable, free GPUs elsewhere or
	// not, so it may preempt a lower-priority task of its own team. An
	// entry without it (written before) is applied as it was then: a task
	// that fits on free GPUs is refused a preemption whatever its team
	// holds. The field keeps a log replaying as it first applied.
	TeamRoom bool `json:"team_room,omitempty"`
}

// Victim is one attempt a PreemptTasks stops.
type Victim struct {
	TaskID    string `json:"task_id"`
	AttemptID string `json:"attempt_id"`
	// WorkerID is the victim's worker; empty: the command's WorkerID.
	WorkerID string `json:"worker_id,omitempty"`
}

// On is the worker v runs on, in a command whose worker is def.
func (v Victim) On(def string) string {
	if v.WorkerID != "" {
		return v.WorkerID
	}
	return def
}

func (PreemptTasks) Type() Type { return TypePreemptTasks }
