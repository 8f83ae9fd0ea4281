package preemption

import (
	"time"

	"github.com/gpulayer/gpulayer/coordinator/sched/place"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
)

// View is what a preemption decision reads of the replicated state. The
// store gives one under its lock (its read lock to plan, its write lock
// to check a command as it applies), so a decision sees one state.
type View interface {
	// Fleet is the groups and the worker views place.CanRun reads.
	place.Fleet
	// Shares is the teams' use and limits (quota, ceiling).
	place.Shares
	// Workers lists every worker, by id.
	Workers() []*record.Worker
	// Worker is the worker of that id, nil if none.
	Worker(id string) *record.Worker
	// Job is the job of that id, nil if none.
	Job(id string) *record.Job
	// Task is the task of that id, nil if none.
	Task(id string) *record.Task
	// Holding reads one active task (place.DeviceUse).
	Holding(taskID string) place.Holding
	// HeldFromOthers reports whether any of devs is held on w, at now,
	// by a live preemption hold for a task other than taskID (and not of
	// its gang).
	HeldFromOthers(w *record.Worker, devs []string, taskID string, now time.Time) bool
}
