// Package jobhistory derives a job's history, a time-ordered list of facts,
// from its replicated records (the job, its tasks, their attempts) on
// each read, so every replica answers alike and nothing is kept twice.
// Facts about one attempt are read from the attempt (attemptEvents): a
// new attempt-level fact is a new kind and one more case there. The
// state looks the records up (its JobEvents); coordinator/view gives
// each kind its wire words.
package jobhistory

import (
	"slices"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
)

// JobEventKind is what a JobEvent says happened.
type JobEventKind int

// The kinds of job events. A new kind goes last, before JobEventKinds,
// which counts them (view's TestJobEventKindsAllHaveWords walks them all).
const (
	JobSubmitted JobEventKind = iota
	JobWaitsForDependencies
	AttemptAssigned
	AttemptStarted
	AttemptPreemptionAsked
	AttemptEnded
	CheckpointSaved
	TaskCancelled
	AttemptPreflight
	// JobEventKinds is how many kinds there are; it is no kind.
	JobEventKinds
)

// JobEvent is one fact of a job's history.
type JobEvent struct {
	At   time.Time
	Kind JobEventKind
	// By and Team: who submitted the job, for which team (JobSubmitted).
	By, Team string
	// TaskID and TaskIndex name the task of a task or attempt event.
	TaskID    string
	TaskIndex int
	// Attempt is a copy of the attempt an attempt event is about (its
	// worker, devices, outcome, reason and preemptor are read from it).
	Attempt *record.Attempt
	// Checkpoint is the checkpoint saved (CheckpointSaved).
	Checkpoint *record.TaskCheckpoint
	// DependsOn are the conditions the job waits for (JobWaitsForDependencies).
	DependsOn []command.Dependency
	// Reason says why (TaskCancelled).
	Reason string
}

// MaxJobEvents bounds the events one read answers: the latest are kept.
const MaxJobEvents = 10000

// Of lists the events of job j, whose tasks are tasks (in j's order; a
// nil one is skipped), oldest first, at most MaxJobEvents (the latest;
// truncated says whether older ones were left out).
func Of(j *record.Job, tasks []*record.Task) (events []JobEvent, truncated bool) {
	team := command.TeamOf(j.Team)
	out := []JobEvent{{At: j.CreatedAt, Kind: JobSubmitted, By: j.CreatedBy, Team: team}}
	if len(j.Spec.DependsOn) > 0 {
		out = append(out, JobEvent{At: j.CreatedAt, Kind: JobWaitsForDependencies, DependsOn: slices.Clone(j.Spec.DependsOn)})
	}
	for _, t := range tasks {
		if t == nil {
			continue
		}
		for i := range t.Attempts {
			out = attemptEvents(out, t, t.Attempts[i])
		}
		if t.State == record.TaskCancelled {
			out = append(out, JobEvent{At: t.UpdatedAt, Kind: TaskCancelled, TaskID: t.ID, TaskIndex: t.Index, Reason: t.Reason})
		}
	}
	// Events of one instant keep the order they were derived in: the
	// job's, then each task's by index, each attempt's in its order.
	slices.SortStableFunc(out, func(a, b JobEvent) int { return a.At.Compare(b.At) })
	if len(out) > MaxJobEvents {
		return slices.Clone(out[len(out)-MaxJobEvents:]), true
	}
	return out, false
}

// attemptEvents appends the facts of t's attempt a: its assignment, its
// preflight (how it went, and how long it took against its bound), its
// start, the preemption that asked it to stop, its end, and the
// checkpoint it saved when that is t's latest.
func attemptEvents(out []JobEvent, t *record.Task, a record.Attempt) []JobEvent {
	a.Devices = slices.Clone(a.Devices)
	ev := func(at time.Time, k JobEventKind) JobEvent {
		return JobEvent{At: at, Kind: k, TaskID: t.ID, TaskIndex: t.Index, Attempt: &a}
	}
	out = append(out, ev(a.AssignedAt, AttemptAssigned))
	if a.Preflight != nil { // reported with the start, or with the fail that ended it
		at := a.StartedAt
		if at.IsZero() {
			at = a.EndedAt
		}
		out = append(out, ev(at, AttemptPreflight))
	}
	if !a.StartedAt.IsZero() {
		out = append(out, ev(a.StartedAt, AttemptStarted))
	}
	if a.PreemptedBy != nil {
		out = append(out, ev(a.PreemptedBy.At, AttemptPreemptionAsked))
	}
	if !a.EndedAt.IsZero() {
		out = append(out, ev(a.EndedAt, AttemptEnded))
		if c := t.Checkpoint; c != nil && c.AttemptID == a.ID {
			e := ev(a.EndedAt, CheckpointSaved)
			cp := *c
			e.Checkpoint = &cp
			out = append(out, e)
		}
	}
	return out
}
