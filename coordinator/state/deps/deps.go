// Package deps decides when a job's pending tasks may join the pending
// queue: job dependencies (depends_on: the index of which jobs wait for
// which, a submit's check, how an ended job ended, whether a condition
// holds) and parallelism windows. Over the state's tables (Tables) it
// admits a new job (Admit: it waits, is cancelled, or its tasks are
// queued), settles, at the end of every apply, the jobs that wait for one
// that ended (Settle), fits a bounded job's window (FitWindow), and
// rebuilds the index at restore (Rebuild).
//
// The index is derived from the jobs and tasks and rebuilt at restore;
// nothing here reads a clock, so replicas settle the same jobs at the
// same entry. Every job waited for existed when its dependent was
// submitted, so the graph has no cycle.
package deps

import (
	"fmt"
	"iter"
	"slices"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
	"github.com/gpulayer/gpulayer/coordinator/state/stateerr"
)

// Index counts, per job, the dependencies not yet met; lists, per
// waited-on job, the jobs that wait for it (one may have been cancelled
// since: settling skips it); and keeps the jobs whose parallelism may
// hold tasks out of the queue.
type Index struct {
	waiting    map[string]int
	dependents map[string][]string
	bounded    map[string]struct{}
}

// New returns an empty index.
func New() *Index {
	return &Index{waiting: map[string]int{}, dependents: map[string][]string{}, bounded: map[string]struct{}{}}
}

// Wait records that job waits for unmet dependencies, on the jobs named
// in open (those that have not ended).
func (x *Index) Wait(job string, unmet int, open []string) {
	x.waiting[job] = unmet
	for _, id := range open {
		x.dependents[id] = append(x.dependents[id], job)
	}
}

// Unmet is how many of job's dependencies are not yet met (0: it does
// not wait).
func (x *Index) Unmet(job string) int { return x.waiting[job] }

// Met counts one of job's dependencies as met and reports how many are
// left; at none, job waits no more.
func (x *Index) Met(job string) int {
	x.waiting[job]--
	left := x.waiting[job]
	if left <= 0 {
		delete(x.waiting, job)
	}
	return left
}

// Stop forgets that job waits (it ended, or was cancelled).
func (x *Index) Stop(job string) { delete(x.waiting, job) }

// Ended forgets job as a waiting or bounded job; it has ended.
func (x *Index) Ended(job string) {
	delete(x.waiting, job)
	delete(x.bounded, job)
}

// Tracked reports whether job waits or is bounded.
func (x *Index) Tracked(job string) bool {
	_, waits := x.waiting[job]
	_, bounded := x.bounded[job]
	return waits || bounded
}

// TakeDependents returns the jobs that wait for job, which has ended,
// and forgets them as its dependents (none: nothing waits for it).
func (x *Index) TakeDependents(job string) []string {
	ds := x.dependents[job]
	delete(x.dependents, job)
	return ds
}

// Bound records that job's parallelism may hold tasks out of the queue.
func (x *Index) Bound(job string) { x.bounded[job] = struct{}{} }

// Held yields the jobs that may hold pending tasks out of the queue:
// those that wait, then the bounded ones that do not, each once.
func (x *Index) Held() iter.Seq[string] {
	return func(yield func(string) bool) {
		for id := range x.waiting {
			if !yield(id) {
				return
			}
		}
		for id := range x.bounded {
			if _, waits := x.waiting[id]; !waits && !yield(id) {
				return
			}
		}
	}
}

// Outcome is how a job whose tasks ended in states ended, in the task
// states' words: failed when a task failed, cancelled when one was
// cancelled and none failed, else succeeded.
func Outcome(states iter.Seq[string]) string {
	out := record.TaskSucceeded
	for st := range states {
		switch st {
		case record.TaskFailed:
			return record.TaskFailed
		case record.TaskCancelled:
			out = record.TaskCancelled
		}
	}
	return out
}

// Holds reports whether cond holds of a job that ended outcome.
func Holds(cond, outcome string) bool {
	switch cond {
	case command.DependFinished:
		return true
	case command.DependSucceeded:
		return outcome == record.TaskSucceeded
	case command.DependFailed:
		return outcome == record.TaskFailed
	}
	return false
}

// Broken is the reason a job is cancelled when dependency d ended
// outcome, which its condition does not accept.
func Broken(d command.Dependency, outcome string) string {
	return fmt.Sprintf("dependency %s ended %s: condition %s can no longer hold", d.Job, outcome, d.Condition)
}

// Check validates a submit of count tasks: its parallelism, and its
// dependencies (at most command.MaxDependencies, none on itself, none
// twice, each condition known, each job existing, as exists says),
// changing nothing.
func Check(c command.SubmitJob, count int, exists func(id string) bool) error {
	spec := c.Spec
	switch {
	case spec.Parallelism < 0 || spec.Parallelism > count:
		return fmt.Errorf("%w: parallelism must be between 1 and count (%d)", stateerr.ErrInvalid, count)
	case spec.Gang && spec.Parallelism > 0 && spec.Parallelism < count:
		return fmt.Errorf("%w: a gang runs whole: parallelism must not be below count", stateerr.ErrInvalid)
	case len(spec.DependsOn) > command.MaxDependencies:
		return fmt.Errorf("%w: at most %d dependencies", stateerr.ErrInvalid, command.MaxDependencies)
	}
	seen := make(map[string]bool, len(spec.DependsOn))
	for _, d := range spec.DependsOn {
		switch {
		case d.Job == c.JobID:
			return fmt.Errorf("%w: a job cannot depend on itself", stateerr.ErrInvalid)
		case seen[d.Job]:
			return fmt.Errorf("%w: job %s is listed twice in depends_on", stateerr.ErrInvalid, d.Job)
		case !slices.Contains([]string{command.DependSucceeded, command.DependFailed, command.DependFinished}, d.Condition):
			return fmt.Errorf("%w: condition %q is not succeeded, failed or finished", stateerr.ErrInvalid, d.Condition)
		}
		seen[d.Job] = true
		if !exists(d.Job) {
			return fmt.Errorf("job %s: %w", d.Job, stateerr.ErrNotFound)
		}
	}
	return nil
}
