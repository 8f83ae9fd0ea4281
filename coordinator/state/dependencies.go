package state

import (
	"fmt"
	"slices"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/deps"
)

// Job dependencies (depends_on). A job that waits for others keeps its
// tasks pending but out of the pending queue, so placement never reads
// them. Every job it waits for existed when it was submitted, so the
// graph has no cycle. When a waited-on job ends, the same apply settles
// each job that waits for it: the condition holds (one dependency fewer;
// at none, its tasks join the queue) or can no longer hold (the job is
// cancelled, naming the dependency, which may in turn settle the jobs
// that wait for it). Nothing is timed: replicas settle the same jobs at
// the same entry.
//
// Only jobs that have not ended are waited for: an ending job settles its
// dependents at once, so garbage collection, which removes ended jobs
// only, never removes a job another still waits for. A dependency on a
// job already removed is refused at submit (not found).

// jobOutcome is how an ended job ended (deps.Outcome of its tasks'
// states).
func (s *Store) jobOutcome(j *Job) string {
	return deps.Outcome(func(yield func(string) bool) {
		for _, id := range j.TaskIDs {
			if !yield(s.tasks.Get(id).State) {
				return
			}
		}
	})
}

// unmetDependencies counts j's dependencies on jobs that have not ended,
// and names the first that ended so that its condition can no longer hold.
func (s *Store) unmetDependencies(j *Job) (unmet int, broken string) {
	for _, d := range j.Spec.DependsOn {
		dj, ok := s.jobs.Lookup(d.Job)
		if !ok {
			continue // removed after it ended, which settled j then
		}
		if !s.jobTerminal(dj) {
			unmet++
			continue
		}
		if out := s.jobOutcome(dj); !deps.Holds(d.Condition, out) && broken == "" {
			broken = deps.Broken(d, out)
		}
	}
	return unmet, broken
}

// holdForDependencies is called once a new job's tasks exist: it reports
// whether the job waits (its tasks must stay out of the queue), and
// cancels it at once when a dependency has already ended the wrong way.
func (s *Store) holdForDependencies(j *Job, now time.Time) bool {
	if len(j.Spec.DependsOn) == 0 {
		return false
	}
	unmet, broken := s.unmetDependencies(j)
	if broken != "" {
		s.cancelWaiting(j, broken, now)
		return true
	}
	if unmet == 0 {
		return false
	}
	s.indexWaiting(j, unmet)
	return true
}

// indexWaiting records that j waits for unmet jobs that have not ended.
func (s *Store) indexWaiting(j *Job, unmet int) {
	var open []string
	for _, d := range j.Spec.DependsOn {
		if dj, ok := s.jobs.Lookup(d.Job); ok && !s.jobTerminal(dj) {
			open = append(open, d.Job)
		}
	}
	s.deps.Wait(j.ID, unmet, open)
}

// cancelWaiting ends every task of a job that waits for a dependency
// (all pending, none queued) as cancelled for reason.
func (s *Store) cancelWaiting(j *Job, reason string, now time.Time) {
	for _, id := range j.TaskIDs {
		t := s.ownTask(s.tasks.Get(id))
		if t.Terminal() {
			continue
		}
		t.State = taskCancelled
		t.Reason = reason
		t.UpdatedAt = now
	}
	s.deps.Stop(j.ID)
	s.audit.Record(command.AuditEvent{Time: now, Kind: "job.cancelled", Actor: dependencyActor, Subject: j.ID, Team: command.TeamOf(j.Team), Detail: reason})
}

// dependencyActor is the actor of the audit event of a job cancelled
// because a dependency can no longer be met.
const dependencyActor = "coordinator"

// noteTouched remembers, during an apply, a job whose task changed: it
// may have ended (settleDependents).
func (s *Store) noteTouched(jobID string) {
	if n := len(s.touched); n > 0 && s.touched[n-1] == jobID {
		return
	}
	s.touched = append(s.touched, jobID)
}

// settleDependents runs at the end of each applied command: for each job
// whose task changed it fits a bounded job's window (parallelism.go), and
// for one that has ended and is waited for it settles the jobs that wait
// for it, and so on down the chain (each cancelled job is touched in
// turn). The cost is the dependents of the jobs that ended, and one pass
// over the tasks of each bounded job touched.
func (s *Store) settleDependents() {
	var seen map[string]bool // most applies touch one job
	for len(s.touched) > 0 {
		id := s.touched[0]
		s.touched = s.touched[1:]
		j, ok := s.jobs.Lookup(id)
		if !ok {
			continue
		}
		if bounded(j) && !seen[id] { // once: the apply's changes are all made
			if seen == nil {
				seen = map[string]bool{}
			}
			seen[id] = true
			s.fitWindow(j)
		}
		if s.deps.Tracked(id) && s.jobTerminal(j) {
			s.deps.Ended(id) // cancelled while it waited, or past its window
		}
		if !s.jobTerminal(j) {
			continue
		}
		waiters := s.deps.TakeDependents(id)
		if len(waiters) == 0 {
			continue
		}
		outcome, now := s.jobOutcome(j), s.jobEnded(j)
		for _, wid := range waiters {
			s.settleOne(wid, id, outcome, now)
		}
	}
	s.touched = s.touched[:0]
}

// settleOne settles waiter's dependency on ended, which ended outcome.
func (s *Store) settleOne(waiter, ended, outcome string, now time.Time) {
	if s.deps.Unmet(waiter) == 0 {
		return // cancelled since, or already settled
	}
	w, ok := s.jobs.Lookup(waiter)
	if !ok || s.jobTerminal(w) {
		s.deps.Stop(waiter) // cancelled while it waited (and maybe collected since)
		return
	}
	i := slices.IndexFunc(w.Spec.DependsOn, func(d command.Dependency) bool { return d.Job == ended })
	if i < 0 {
		return
	}
	d := w.Spec.DependsOn[i]
	if !deps.Holds(d.Condition, outcome) {
		s.cancelWaiting(w, deps.Broken(d, outcome), now) // touches w: its own waiters settle next
		return
	}
	if s.deps.Met(waiter) > 0 {
		return
	}
	s.enqueueJob(w) // parallelism.go
	s.markPending()
}

// checkNotWaiting refuses to assign a task of a job that still waits for
// a dependency (its tasks are not in the queue, so only a stale or forged
// placement names one).
func (s *Store) checkNotWaiting(j *Job) error {
	if s.deps.Unmet(j.ID) > 0 {
		return fmt.Errorf("job %s waits for its dependencies: %w", j.ID, ErrConflict)
	}
	return nil
}

// waitingFor names, for a pending reason, a dependency j still waits
// for, or "".
func (s *Store) waitingFor(j *Job) string {
	if s.deps.Unmet(j.ID) == 0 {
		return ""
	}
	for _, d := range j.Spec.DependsOn {
		if dj, ok := s.jobs.Lookup(d.Job); ok && !s.jobTerminal(dj) {
			return fmt.Sprintf("waits for job %s to end (%s)", d.Job, d.Condition)
		}
	}
	return ""
}

// rebuildDependencies derives the index from the jobs and tasks after a
// restore, and takes the tasks of waiting jobs out of the queue.
func (s *Store) rebuildDependencies() {
	s.deps = deps.New()
	for _, id := range s.jobOrder {
		j := s.jobs.Get(id)
		if s.jobTerminal(j) {
			continue
		}
		if bounded(j) {
			s.deps.Bound(j.ID)
		}
		if len(j.Spec.DependsOn) == 0 {
			continue
		}
		unmet, _ := s.unmetDependencies(j)
		if unmet == 0 {
			continue
		}
		s.indexWaiting(j, unmet)
		for _, tid := range j.TaskIDs {
			if t := s.tasks.Get(tid); t.State == taskPending {
				s.queue.Remove(keyOf(j), t)
			}
		}
	}
}

// forHeld calls f for each job that holds pending tasks out of the queue
// (waiting for a dependency, or past its parallelism window) with how
// many it holds. It reads only the waiting and bounded jobs.
func (s *Store) forHeld(f func(j *Job, held int)) {
	visit := func(id string) {
		j, ok := s.jobs.Lookup(id)
		if !ok {
			return
		}
		n := 0
		for _, tid := range j.TaskIDs {
			if _, queued := s.queue.Priority(tid); !queued && s.tasks.Get(tid).State == taskPending {
				n++
			}
		}
		if n > 0 {
			f(j, n)
		}
	}
	for id := range s.deps.Held() {
		visit(id)
	}
}

// heldTargeting counts the held pending tasks whose job targets t (the
// queue's own index counts the others).
func (s *Store) heldTargeting(t command.Target) int {
	n := 0
	s.forHeld(func(j *Job, held int) {
		if j.Spec.Target != nil && *j.Spec.Target == t {
			n += held
		}
	})
	return n
}
