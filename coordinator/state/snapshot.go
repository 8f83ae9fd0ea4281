package state

import (
	"fmt"
	"io"
	"strings"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/sched/backfill"
	"github.com/gpulayer/gpulayer/coordinator/sched/fit"
	"github.com/gpulayer/gpulayer/coordinator/state/artifacts"
	"github.com/gpulayer/gpulayer/coordinator/state/audit"
	"github.com/gpulayer/gpulayer/coordinator/state/creds"
	"github.com/gpulayer/gpulayer/coordinator/state/deps"
	"github.com/gpulayer/gpulayer/coordinator/state/enroll"
	"github.com/gpulayer/gpulayer/coordinator/state/gpuops"
	"github.com/gpulayer/gpulayer/coordinator/state/groups"
	"github.com/gpulayer/gpulayer/coordinator/state/snapcodec"
	"github.com/gpulayer/gpulayer/coordinator/state/teams"
	"github.com/gpulayer/gpulayer/coordinator/state/usage"
)

// Snapshot writes the whole state to w as a version 3 snapshot (package snapcodec).
// Output is deterministic for a given state. It holds the read lock only
// while it captures; the encoding runs outside it.
func (s *Store) Snapshot(w io.Writer) error {
	return s.Capture().Encode(w)
}

// Restore replaces the state with a snapshot, of version 3 or 2 or the
// older JSON version 1, and rebuilds every index. The snapshot is decoded,
// checked and indexed into fresh tables first; only a snapshot that passes
// replaces the state, so one that fails to decode or validate leaves the
// previous state untouched.
func (s *Store) Restore(r io.Reader) error {
	snap, err := snapcodec.Decode(r)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	scratch := &Store{}
	scratch.reset()
	if err := scratch.load(snap); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tables = scratch.tables
	s.derived.DropAll(false) // workerview.go
	s.markPending()
	s.wake()
	return nil
}

// load fills empty tables from a decoded snapshot, refusing one whose
// records contradict each other (ErrInvalid).
func (s *Store) load(snap *snapcodec.Image) error {
	s.bootstrapGeneration = snap.BootstrapGeneration
	s.seq = snap.Seq
	var err error
	if s.credentials, err = creds.Restore(snap.Credentials); err != nil {
		return err
	}
	for _, w := range snap.Workers {
		if w == nil || s.workers[w.ID] != nil {
			return fmt.Errorf("worker listed twice or empty: %w", ErrInvalid)
		}
		w.DropHeld()
		gpuops.ApproveLegacy(w)
		s.putWorker(w) // gangtopology_index.go
	}
	if s.groups, err = groups.Restore(snap.Groups); err != nil {
		return err
	}
	if s.teams, err = teams.Restore(snap.Teams); err != nil {
		return err
	}
	if s.usage, err = usage.Restore(snap.Usage, snap.UsageTotals); err != nil {
		return err
	}
	if s.allowlist, err = enroll.Restore(snap.Clusters, snap.Enrollments); err != nil {
		return err
	}
	if s.artifacts, err = artifacts.Restore(snap.Artifacts); err != nil {
		return err
	}
	s.audit = audit.Restore(snap.Audit, snap.AuditRefusals, snap.AuditSeq)
	s.jobs.Reserve(len(snap.Jobs))
	s.jobOrder = make([]string, 0, len(snap.Jobs))
	s.tasks.Reserve(len(snap.Tasks))
	s.submissions.Reserve(len(snap.Submissions) + len(snap.Finishes))
	for _, j := range snap.Jobs {
		if j == nil || s.jobs.Get(j.ID) != nil {
			return fmt.Errorf("job listed twice or empty: %w", ErrInvalid)
		}
		j.SetRules(rulesOf(j.Spec))
		s.jobs.Set(j.ID, j)
		s.jobOrder = append(s.jobOrder, j.ID)
	}
	for _, t := range snap.Tasks {
		if t == nil || s.tasks.Get(t.ID) != nil {
			return fmt.Errorf("task listed twice or empty: %w", ErrInvalid)
		}
		if err := checkTaskID(t.ID); err != nil {
			return err
		}
		j := s.jobs.Get(t.JobID)
		if j == nil {
			return fmt.Errorf("task %s of job %s, which the snapshot lacks: %w", t.ID, t.JobID, ErrInvalid)
		}
		shareIDs(t, j)
		s.tasks.Set(t.ID, t)
		s.outputBytes += t.LogBytes
		switch {
		case t.State == "pending":
			s.queue.Push(keyOf(j), j.Spec.Priority, t)
		case t.Active():
			if w, ok := s.workers[t.WorkerID]; ok {
				w.Hold(t.ID)
				s.inuse.hold(t.ID, command.TeamOf(j.Team), fit.TaskCenti(w, t.Devices, j.Spec.Resources), backfill.EndOf(t, j))
			}
		}
	}
	// The records' agreement, once the tables are whole, and before
	// anything walks a job's tasks by its list (a job naming a task the
	// snapshot lacks would stop the rebuild below on a nil task).
	if err := snap.Check(snapcodec.Loaded{
		Task:   s.tasks.Get,
		Job:    s.jobs.Get,
		Worker: func(id string) bool { return s.workers[id] != nil },
	}); err != nil {
		return err
	}
	s.deps = deps.Rebuild(depTables{s}, s.jobOrder) // the waiting jobs out of the queue, the windows fitted
	for key, sub := range snap.Submissions {
		if sub.Task == nil || sub.Task.ID == "" || !strings.HasPrefix(key, sub.Task.ID+"/") {
			return fmt.Errorf("submission %q without the task it finished: %w", key, ErrInvalid)
		}
		// A finish whose task has not changed since shares the table's
		// record, as it did before the snapshot.
		if t := s.tasks.Get(sub.Task.ID); t != nil && t.SameState(sub.Task) {
			t.Freeze()
			sub.Task = t
		}
		s.submissions.Set(key, &sub)
	}
	for key, f := range snap.Finishes {
		t := s.tasks.Get(f.Task)
		if t == nil {
			return fmt.Errorf("finish %q of task %s, which the snapshot lacks: %w", key, f.Task, ErrInvalid)
		}
		t.Freeze() // shared with the finish, as before the snapshot
		s.submissions.Set(key, &Submission{BodyHash: f.BodyHash, Task: t})
	}
	s.idempotency.Reserve(len(snap.Idempotency))
	for k, v := range snap.Idempotency {
		if j := s.jobs.Get(v); j != nil {
			v = j.ID // one copy of the id
		}
		s.idempotency.Set(k, v)
	}
	if snap.Nodes != nil {
		s.nodes = snap.Nodes
	}
	return nil
}

// shareIDs points the ids that name t and its job at one copy each: the
// job's own id, and the task's own id in the job's list.
func shareIDs(t *Task, j *Job) {
	t.JobID = j.ID
	if t.Index >= 0 && t.Index < len(j.TaskIDs) && j.TaskIDs[t.Index] == t.ID {
		j.TaskIDs[t.Index] = t.ID
	}
}
