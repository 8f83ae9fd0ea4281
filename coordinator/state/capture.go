package state

import (
	"fmt"
	"io"
	"maps"

	"github.com/gpulayer/gpulayer/coordinator/state/artifacts"
	"github.com/gpulayer/gpulayer/coordinator/state/creds"
	"github.com/gpulayer/gpulayer/coordinator/state/snapcodec"
)

// Capture is the replicated state as it stood at one point of the log,
// detached from the store: later commands do not change it, so it can be
// encoded (Encode) on another goroutine while the store goes on applying.
//
// Taking one copies no more than it must, under the store's read lock;
// the sorting and the encoding, where a snapshot's time goes, happen in
// Encode, outside any lock. The store keeps to rules that make sharing
// safe (see docs/architecture.md, "Snapshots"):
//   - the tables that grow with the jobs kept (tasks, jobs, submissions,
//     idempotency keys) are frozen, not copied (package cow): a write after
//     a capture copies the one shard it changes;
//   - tasks are shared, copy on write: a capture moves the store's
//     generation on, and a command copies a task written in an older one
//     before it changes it (ownTask);
//   - jobs and the job order, remembered submissions and the audit rings
//     are shared: a job is replaced whole when it changes (ownJob), the
//     others are only appended to, dropped or replaced;
//   - task output is not in the tables at all: the output.Store keeps it,
//     and a snapshot takes its own view of it (CaptureWithOutput);
//   - workers and credentials are copied by value, sharing what they
//     point to;
//   - records copied by value or shallowly share what they point to: the
//     store replaces a slice, map or pointer field rather than edit what
//     it points to (Task.OwnCurrent, LastAcquire.With);
//   - groups, clusters and artifacts, small tables whose lists are edited
//     in place, are copied deeply.
type Capture struct {
	t snapcodec.Tables
}

// Encode writes the capture as a snapshot (the current version, package
// snapcodec). It takes no lock, may run while the store applies later
// commands and changes nothing in the capture (it may run more than once,
// concurrently). Output is deterministic.
func (c *Capture) Encode(w io.Writer) error { return snapcodec.Encode(w, &c.t) }

// Capture takes a detached copy of the state for a snapshot. The FSM
// calls it where no command is being applied; reads may go on.
func (s *Store) Capture() *Capture {
	c := s.newCapture()
	s.mu.RLock()
	defer s.mu.RUnlock()
	s.captureLocked(c)
	return c
}

// newCapture allocates, before the store's locks are taken, the lists a
// capture copies the workers and credentials into (megabytes with 10,000
// workers): an allocation that large while the garbage collector marks
// is charged with marking work, which under the locks stalls the writes.
func (s *Store) newCapture() *Capture {
	s.mu.RLock()
	nw, nc := len(s.workers), s.credentials.Len()
	s.mu.RUnlock()
	return &Capture{t: snapcodec.Tables{
		Workers:     make([]Worker, 0, nw+nw/8+16), // room for some registered meanwhile
		Credentials: make([]creds.Credential, 0, nc+nc/8+16),
	}}
}

// captureLocked fills c, from newCapture, for a caller holding the read
// lock.
func (s *Store) captureLocked(c *Capture) {
	workers, credentials := c.t.Workers[:0], c.t.Credentials[:0]
	c.t = snapcodec.Tables{
		BootstrapGeneration: s.bootstrapGeneration,
		Seq:                 s.seq,
		Credentials:         credentials,
		Workers:             workers,
		Jobs:                s.jobs.Freeze(),
		JobOrder:            s.jobOrder[:len(s.jobOrder):len(s.jobOrder)],
		Tasks:               s.tasks.Freeze(),
		Artifacts:           make([]artifacts.Artifact, 0, s.artifacts.Len()),
		Submissions:         s.submissions.Freeze(),
		Idempotency:         s.idempotency.Freeze(),
		Nodes:               maps.Clone(s.nodes),
	}
	c.t.Audit, c.t.Refusals, c.t.AuditSeq = s.audit.Frozen()
	c.t.Credentials = s.credentials.AppendTo(c.t.Credentials)
	for _, x := range s.workers {
		c.t.Workers = append(c.t.Workers, *x)
		c.t.Workers[len(c.t.Workers)-1].DropHeld()
	}
	s.gen.Add(1) // the tasks are shared from here on: ownTask copies one before it changes
	c.t.Groups = s.groups.Copies()
	c.t.Teams = s.teams.Copies()
	c.t.Usage, c.t.UsageTotals = s.usage.Copies()
	c.t.Clusters, c.t.Enrollments = s.allowlist.Copies()
	c.t.Artifacts = s.artifacts.AppendTo(c.t.Artifacts)
}

// ownJob replaces j in the table with a copy the caller may change: a
// job may be shared with a capture.
func (s *Store) ownJob(j *Job) *Job {
	c := *j
	s.jobs.Set(j.ID, &c)
	return &c
}

// checkOwnership, set by this package's tests, makes every command count
// as the first after a capture, and a task changed without ownTask panic.
var checkOwnership bool

// ownTask returns the task to change: t itself when it was written since
// the last capture, else a copy put in its place in the table and in the
// pending queue, t being possibly shared with a capture. The copy is
// shallow: what a task points to is replaced, never edited (Task.OwnCurrent).
// Every command that changes a task calls it where it finds the task,
// before it hands the task on.
func (s *Store) ownTask(t *Task) *Task {
	s.noteTouched(t.JobID) // its job may end (dependencies.go)
	gen := s.gen.Load()
	if t.Gen() == gen && !t.Frozen() {
		return t
	}
	c := *t
	c.Stamp(gen)
	s.tasks.Set(t.ID, &c)
	if t.State == taskPending {
		if j := s.jobs.Get(t.JobID); j != nil {
			s.queue.Replace(keyOf(j), t, &c)
		}
	}
	return &c
}

// mustOwn panics, under checkOwnership, when t was not made the store's
// own (ownTask) before it is changed.
func (s *Store) mustOwn(t *Task) {
	if checkOwnership && (t.Gen() != s.gen.Load() || t.Frozen() || s.tasks.Get(t.ID) != t) {
		panic(ownershipViolation(fmt.Sprintf("state: task %s changed without ownTask", t.ID)))
	}
}

// WithoutAudit returns the capture without the audit log (both rings and
// the last event's number): the state to compare where refusals, which
// are audited, must otherwise change nothing.
func (c *Capture) WithoutAudit() *Capture {
	out := *c
	out.t.Audit, out.t.Refusals, out.t.AuditSeq = nil, nil, 0
	return &out
}

// WithoutNodes returns the capture without the nodes table (the HTTP
// address of each coordinator that has led): the state to compare where
// which node leads may differ.
func (c *Capture) WithoutNodes() *Capture {
	out := *c
	out.t.Nodes = nil
	return &out
}

// freezeTables moves the large tables' generations on, as a capture
// does, without keeping the views (checkOwnership).
func (t *tables) freezeTables() {
	t.jobs.Freeze()
	t.tasks.Freeze()
	t.submissions.Freeze()
	t.idempotency.Freeze()
}
