package state

import (
	"maps"
	"slices"

	"github.com/gpulayer/gpulayer/coordinator/command"
)

// Capture is the replicated state as it stood at one point of the log,
// detached from the store: later commands do not change it, so it can be
// encoded (Encode) on another goroutine while the store goes on applying.
//
// Taking one costs a copy of each record, made under the store's read
// lock, and no encoding: the sorting and the encoding, which is where a
// snapshot's time goes, happen in Encode, outside any lock. Records the
// store only ever replaces or appends to (a job's spec, log chunks, audit
// events, remembered submissions) are shared, not copied.
type Capture struct {
	bootstrapGeneration int
	seq                 uint64
	auditSeq            uint64

	credentials []*Credential
	workers     []*Worker
	jobs        []*Job // in submission order
	tasks       []*Task
	groups      []*Group
	clusters    []*Cluster
	enrollments []*Enrollment
	artifacts   []*Artifact

	logs        map[string][]LogRecord
	submissions map[string]Submission
	idempotency map[string]string
	nodes       map[string]string
	audit       []command.AuditEvent
	refusals    []command.AuditEvent
}

// Capture takes a detached copy of the state for a snapshot. Call it
// where no command is being applied (the FSM's Snapshot); reads may go on.
func (s *Store) Capture() *Capture {
	s.mu.RLock()
	defer s.mu.RUnlock()
	c := &Capture{
		bootstrapGeneration: s.bootstrapGeneration,
		seq:                 s.seq,
		auditSeq:            s.auditSeq,
		credentials:         make([]*Credential, 0, len(s.credentials)),
		workers:             make([]*Worker, 0, len(s.workers)),
		jobs:                make([]*Job, 0, len(s.jobOrder)),
		tasks:               make([]*Task, 0, len(s.tasks)),
		groups:              make([]*Group, 0, len(s.groups)),
		clusters:            make([]*Cluster, 0, len(s.clusters)),
		enrollments:         make([]*Enrollment, 0, len(s.enrollments)),
		artifacts:           make([]*Artifact, 0, len(s.artifacts)),
		logs:                make(map[string][]LogRecord, len(s.logs)),
		submissions:         maps.Clone(s.submissions),
		idempotency:         maps.Clone(s.idempotency),
		nodes:               maps.Clone(s.nodes),
		// Both rings are only appended to or replaced whole (appendBounded,
		// the retention sweep), never edited in place.
		audit:    s.audit[:len(s.audit):len(s.audit)],
		refusals: s.refusals[:len(s.refusals):len(s.refusals)],
	}
	for _, x := range s.credentials {
		v := x.clone()
		c.credentials = append(c.credentials, &v)
	}
	for _, x := range s.workers {
		v := x.clone()
		c.workers = append(c.workers, &v)
	}
	for _, id := range s.jobOrder {
		v := s.jobs[id].clone()
		c.jobs = append(c.jobs, &v)
	}
	tasks := make([]Task, len(s.tasks)) // one allocation for them all
	i := 0
	for _, x := range s.tasks {
		tasks[i] = x.clone()
		c.tasks = append(c.tasks, &tasks[i])
		i++
	}
	for _, x := range s.groups {
		v := *x
		v.Members = slices.Clone(x.Members)
		c.groups = append(c.groups, &v)
	}
	for _, x := range s.clusters {
		v := x.clone()
		c.clusters = append(c.clusters, &v)
	}
	for _, x := range s.enrollments {
		v := *x
		c.enrollments = append(c.enrollments, &v)
	}
	for _, x := range s.artifacts {
		v := x.clone()
		c.artifacts = append(c.artifacts, &v)
	}
	// A task's log is only appended to (or dropped whole): its prefix, cut
	// to its length, is immutable.
	for id, recs := range s.logs {
		c.logs[id] = recs[:len(recs):len(recs)]
	}
	return c
}

// clone copies w and everything it points to but its active set, which
// is derived and not part of a snapshot.
func (w *Worker) clone() Worker {
	c := *w
	c.active = nil
	c.Labels = maps.Clone(w.Labels)
	c.Capabilities = slices.Clone(w.Capabilities)
	c.Executors = slices.Clone(w.Executors)
	c.Devices = slices.Clone(w.Devices)
	c.ClearGPUs = slices.Clone(w.ClearGPUs)
	if w.LastAcquire != nil {
		last := *w.LastAcquire
		last.More = slices.Clone(last.More)
		c.LastAcquire = &last
	}
	c.ApprovedDevices = maps.Clone(w.ApprovedDevices)
	return c
}

// clone copies j but its spec, which is never changed once submitted.
func (j *Job) clone() Job {
	c := *j
	c.TaskIDs = slices.Clone(j.TaskIDs)
	return c
}

// WithoutAudit returns the capture without the audit log (both rings and
// the last event's number): the state to compare where refusals, which
// are audited, must otherwise change nothing.
func (c *Capture) WithoutAudit() *Capture {
	out := *c
	out.audit, out.refusals, out.auditSeq = nil, nil, 0
	return &out
}
