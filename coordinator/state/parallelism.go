package state

import (
	"fmt"
)

// A job's parallelism bounds how many of its tasks are assigned or running
// at once. The pending queue holds only as many of a bounded job's
// pending tasks as its bound has room for, the oldest first (its window,
// fitted at the end of every apply that changed one of its tasks and at
// restore), so placement never walks a long backlog of tasks it may not
// take. Match still passes over a job at its bound (counted once per
// match), and an assignment that would pass it is refused when applied,
// so concurrent acquires cannot overrun it. A gang job's parallelism is
// never below its count (checked at submit), so a gang is never split by
// it.

// bounded reports whether j's parallelism may hold any task back.
func bounded(j *Job) bool {
	p := j.Spec.Parallelism
	return p > 0 && p < max(j.Spec.Count, 1) && !j.Spec.Gang
}

// enqueueJob puts j's pending tasks in the queue: all of them, or for a
// bounded job its window.
func (s *Store) enqueueJob(j *Job) {
	if bounded(j) {
		s.deps.Bound(j.ID)
		s.fitWindow(j)
		return
	}
	for _, id := range j.TaskIDs {
		if t := s.tasks.Get(id); t.State == taskPending {
			s.queue.Push(keyOf(j), j.Spec.Priority, t)
		}
	}
}

// fitWindow makes the queue hold exactly the oldest pending tasks of a
// bounded job that its bound has room for beside its active ones (none
// while it waits for a dependency). The choice depends on the tasks
// alone, so a restored store fits the same window. It costs one pass over
// the job's tasks.
func (s *Store) fitWindow(j *Job) {
	if !bounded(j) {
		return
	}
	room := 0
	if s.deps.Unmet(j.ID) == 0 {
		room = j.Spec.Parallelism - s.activeTasks(j)
	}
	k := keyOf(j)
	for _, id := range j.TaskIDs { // in index order, which is age order
		t := s.tasks.Get(id)
		if t.State != taskPending {
			continue
		}
		_, queued := s.queue.Priority(id)
		switch {
		case room > 0 && !queued:
			s.queue.Push(k, j.Spec.Priority, t)
			room--
		case room > 0:
			room--
		case queued:
			s.queue.Remove(k, t)
		}
	}
}

// activeTasks counts the tasks of j that are assigned or running.
func (s *Store) activeTasks(j *Job) int {
	n := 0
	for _, id := range j.TaskIDs {
		if s.tasks.Get(id).Active() {
			n++
		}
	}
	return n
}

// atParallelism reports whether j already has as many active tasks as
// its parallelism allows.
func (s *Store) atParallelism(j *Job) bool {
	p := j.Spec.Parallelism
	return p > 0 && s.activeTasks(j) >= p
}

// checkParallelism refuses an assignment that would pass j's bound.
func (s *Store) checkParallelism(j *Job) error {
	if s.atParallelism(j) {
		return fmt.Errorf("job %s already has %d tasks active (its parallelism): %w", j.ID, j.Spec.Parallelism, ErrConflict)
	}
	return nil
}
