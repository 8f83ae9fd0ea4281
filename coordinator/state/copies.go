package state

import (
	"slices"
	"sort"

	"github.com/gpulayer/gpulayer/coordinator/state/gpuops"
)

// The records the store returns are copies: a caller may read them after
// the store's lock is released, while later commands change the tables.
// A job's spec is shared, not copied: it is never changed once submitted.

// JobRecord is a job with its tasks, in task order.
type JobRecord struct {
	Job   Job
	Tasks []Task
	// PendingReason, on a read, says why no live worker can take the
	// job's pending tasks (place.Why); empty when one could, or none waits.
	PendingReason string
}

func (s *Store) jobRecord(j *Job) JobRecord {
	r := JobRecord{Job: *j, Tasks: make([]Task, len(j.TaskIDs))}
	r.Job.TaskIDs = slices.Clone(j.TaskIDs)
	for i, id := range j.TaskIDs {
		r.Tasks[i] = s.tasks.Get(id).Clone()
	}
	return r
}

// WorkerRecord is a worker with what the tables derive for it: the tasks
// it holds and the groups it belongs to (directly or not), both sorted.
type WorkerRecord struct {
	Worker       Worker
	RunningTasks []string
	Groups       []string
	// Unapproved says, by UUID, why each GPU awaiting an admin's approval
	// is not offered (gpuops/approve.go).
	Unapproved map[string]string
}

func (s *Store) workerRecord(w *Worker) WorkerRecord {
	running := make([]string, 0, w.HeldCount())
	for id := range w.Held() {
		running = append(running, id)
	}
	sort.Strings(running)
	c := w.Clone()
	return WorkerRecord{Worker: c, RunningTasks: running, Groups: s.groups.Of(w.ID), Unapproved: gpuops.Unapproved(w)}
}
