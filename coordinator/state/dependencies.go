package state

import (
	"fmt"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/deps"
)

// Job dependencies (depends_on) and parallelism windows decide when a
// job's pending tasks may join the queue: the room deps holds the index
// of who waits for whom and the rules (Admit, Settle, FitWindow,
// Rebuild), over the store's tables as depTables gives them. A job's
// parallelism bounds how many of its tasks are assigned or running at
// once; the queue holds only its window of pending tasks, so placement
// never walks a long backlog it may not take. Match still passes over a
// job at its bound, and an assignment that would pass it is refused when
// applied (checkParallelism), so concurrent acquires cannot overrun it.

// depTables is the store as the room deps reads and changes it; the
// caller holds the write lock (or, for reads, the read lock).
type depTables struct{ s *Store }

var _ deps.Tables = depTables{}

func (t depTables) Job(id string) *Job         { return t.s.jobs.Get(id) }
func (t depTables) Task(id string) *Task       { return t.s.tasks.Get(id) }
func (t depTables) Own(tk *Task) *Task         { return t.s.ownTask(tk) }
func (t depTables) Push(j *Job, tk *Task)      { t.s.queue.Push(keyOf(j), j.Spec.Priority, tk) }
func (t depTables) Remove(j *Job, tk *Task)    { t.s.queue.Remove(keyOf(j), tk) }
func (t depTables) Audit(e command.AuditEvent) { t.s.audit.Record(e) }
func (t depTables) MarkPending()               { t.s.markPending() }

func (t depTables) Queued(id string) bool {
	_, queued := t.s.queue.Priority(id)
	return queued
}

func (t depTables) NextTouched() (string, bool) {
	if len(t.s.touched) == 0 {
		return "", false
	}
	id := t.s.touched[0]
	t.s.touched = t.s.touched[1:]
	return id, true
}

// noteTouched remembers, during an apply, a job whose task changed: it
// may have ended, or its window moved (deps.Index.Settle, at the end of
// the apply).
func (s *Store) noteTouched(jobID string) {
	if n := len(s.touched); n > 0 && s.touched[n-1] == jobID {
		return
	}
	s.touched = append(s.touched, jobID)
}

// jobTerminal reports whether every task of j has ended.
func (s *Store) jobTerminal(j *Job) bool { return deps.Terminal(depTables{s}, j) }

// checkNotWaiting refuses to place a task of a job that waits for a
// dependency (the queue never offers one; a gang's own placement names
// one).
func (s *Store) checkNotWaiting(j *Job) error {
	if s.deps.Unmet(j.ID) > 0 {
		return fmt.Errorf("job %s waits for its dependencies: %w", j.ID, ErrConflict)
	}
	return nil
}

// checkParallelism refuses an assignment that would pass j's bound.
func (s *Store) checkParallelism(j *Job) error {
	if deps.AtParallelism(depTables{s}, j) {
		return fmt.Errorf("job %s already has %d tasks active (its parallelism): %w", j.ID, j.Spec.Parallelism, ErrConflict)
	}
	return nil
}

// heldTargeting counts the held pending tasks whose job targets t (the
// queue's own index counts the others).
func (s *Store) heldTargeting(t command.Target) int {
	n := 0
	s.deps.HeldTasks(depTables{s}, func(j *Job, held int) {
		if j.Spec.Target != nil && *j.Spec.Target == t {
			n += held
		}
	})
	return n
}
