package state

import (
	"bytes"
	"reflect"
	"slices"
	"sort"
)

// The records the store returns are copies: a caller may read them after
// the store's lock is released, while later commands change the tables.
// A job's spec is shared, not copied: it is never changed once submitted.

// JobRecord is a job with its tasks, in task order.
type JobRecord struct {
	Job   Job
	Tasks []Task
	// PendingReason, on a read, says why no live worker can take the
	// job's pending tasks (why.go); empty when one could, or none waits.
	PendingReason string
}

func (s *Store) jobRecord(j *Job) JobRecord {
	r := JobRecord{Job: *j, Tasks: make([]Task, len(j.TaskIDs))}
	r.Job.TaskIDs = slices.Clone(j.TaskIDs)
	for i, id := range j.TaskIDs {
		r.Tasks[i] = s.tasks.Get(id).clone()
	}
	return r
}

// clone copies t and everything it points to.
func (t *Task) clone() Task {
	c := *t
	c.gen = 0
	c.Devices = slices.Clone(t.Devices)
	c.ExitCode = cloneInt(t.ExitCode)
	c.Output = bytes.Clone(t.Output)
	c.Artifacts = slices.Clone(t.Artifacts)
	if t.Checkpoint != nil {
		cp := *t.Checkpoint
		c.Checkpoint = &cp
	}
	c.Attempts = slices.Clone(t.Attempts)
	for i := range c.Attempts {
		a := &c.Attempts[i]
		a.Devices = slices.Clone(a.Devices)
		a.ExitCode = cloneInt(a.ExitCode)
		if a.Rendezvous != nil {
			e := *a.Rendezvous
			a.Rendezvous = &e
		}
	}
	return c
}

func cloneInt(p *int) *int {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// WorkerRecord is a worker with what the tables derive for it: the tasks
// it holds and the groups it belongs to (directly or not), both sorted.
type WorkerRecord struct {
	Worker       Worker
	RunningTasks []string
	Groups       []string
	// Unapproved says, by UUID, why each GPU awaiting an admin's approval
	// is not offered (gpuapproval.go).
	Unapproved map[string]string
}

func (s *Store) workerRecord(w *Worker) WorkerRecord {
	running := make([]string, 0, len(w.active))
	for id := range w.active {
		running = append(running, id)
	}
	sort.Strings(running)
	c := w.clone()
	return WorkerRecord{Worker: c, RunningTasks: running, Groups: s.groups.Of(w.ID), Unapproved: unapproved(w)}
}

// sameTask reports whether a and b hold the same task state (what is not
// the task's state, its generation and whether it is frozen, aside).
func sameTask(a, b *Task) bool {
	if a.ID != b.ID || a.State != b.State || len(a.Attempts) != len(b.Attempts) || !a.UpdatedAt.Equal(b.UpdatedAt) {
		return false
	}
	x, y := *a, *b
	x.gen, x.frozen, y.gen, y.frozen = 0, false, 0, false
	return reflect.DeepEqual(x, y)
}
