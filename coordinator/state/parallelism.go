package state

import (
	"fmt"
)

// A job's parallelism bounds how many of its tasks are assigned or running
// at once. Placement passes over the pending tasks of a job at its bound
// (match.go counts each job once per match); an assignment that would pass
// it is refused when applied, so concurrent acquires cannot overrun it.
// A gang job's parallelism is never below its count (checked at submit),
// so a gang is never split by it.

// activeTasks counts the tasks of j that are assigned or running.
func (s *Store) activeTasks(j *Job) int {
	n := 0
	for _, id := range j.TaskIDs {
		if s.tasks.get(id).Active() {
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

// parallelismReason says why j's pending tasks wait for its own tasks,
// or "".
func (s *Store) parallelismReason(j *Job) string {
	if !s.atParallelism(j) {
		return ""
	}
	return fmt.Sprintf("parallelism %d: %d of the job's %d tasks are assigned or running", j.Spec.Parallelism, j.Spec.Parallelism, max(j.Spec.Count, 1))
}

// parallelismGate remembers, for one match, which jobs are at their
// bound, so a job's many pending tasks cost one count.
type parallelismGate map[string]bool

func (g parallelismGate) full(s *Store, j *Job) bool {
	if j.Spec.Parallelism <= 0 {
		return false
	}
	full, ok := g[j.ID]
	if !ok {
		full = s.atParallelism(j)
		g[j.ID] = full
	}
	return full
}
