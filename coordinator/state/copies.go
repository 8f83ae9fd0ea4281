package state

import (
	"bytes"
	"slices"
)

// The records the store returns are copies: a caller may read them after
// the store's lock is released, while later commands change the tables.
// A job's spec is shared, not copied: it is never changed once submitted.

// JobRecord is a job with its tasks, in task order.
type JobRecord struct {
	Job   Job
	Tasks []Task
}

func (s *Store) jobRecord(j *Job) JobRecord {
	r := JobRecord{Job: *j, Tasks: make([]Task, len(j.TaskIDs))}
	r.Job.TaskIDs = slices.Clone(j.TaskIDs)
	for i, id := range j.TaskIDs {
		r.Tasks[i] = s.tasks[id].clone()
	}
	return r
}

// clone copies t and everything it points to.
func (t *Task) clone() Task {
	c := *t
	c.Devices = slices.Clone(t.Devices)
	c.ExitCode = cloneInt(t.ExitCode)
	c.Output = bytes.Clone(t.Output)
	c.Attempts = slices.Clone(t.Attempts)
	for i := range c.Attempts {
		a := &c.Attempts[i]
		a.Devices = slices.Clone(a.Devices)
		a.ExitCode = cloneInt(a.ExitCode)
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
