package state

import (
	"fmt"
	"strings"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
)

// GCOutcome is the outcome of CollectGarbage: how many jobs it removed,
// and whether more jobs were due than its limit let it remove.
type GCOutcome struct {
	Removed int
	More    bool
}

// collectGarbage removes the finished jobs that CollectGarbage's policy
// makes due, oldest first (by creation, the log's order), up to its limit.
func (s *Store) collectGarbage(c command.CollectGarbage) (GCOutcome, error) {
	if c.OlderThan < 0 || c.KeepFinished < 0 || c.Limit < 0 {
		return GCOutcome{}, fmt.Errorf("%w: negative garbage collection bound", ErrInvalid)
	}
	finished := 0
	for _, id := range s.jobOrder {
		if s.jobTerminal(s.jobs[id]) {
			finished++
		}
	}
	cutoff := c.Now.Add(-c.OlderThan)
	due := map[string]bool{}
	more := false
	for _, id := range s.jobOrder {
		j := s.jobs[id]
		if !s.jobTerminal(j) {
			continue
		}
		old := !s.jobEnded(j).After(cutoff)
		excess := c.KeepFinished > 0 && finished > c.KeepFinished
		if !old && !excess {
			continue
		}
		if c.Limit > 0 && len(due) == c.Limit {
			more = true
			break
		}
		due[id] = true
		finished--
	}
	if len(due) == 0 {
		return GCOutcome{}, nil
	}
	s.removeJobs(due)
	s.record(command.AuditEvent{Time: c.Now, Kind: "jobs.collected", Actor: c.By, Source: c.Source,
		Detail: fmt.Sprintf("%d finished jobs removed (older than %v, or beyond the newest %d)", len(due), c.OlderThan, c.KeepFinished)})
	return GCOutcome{Removed: len(due), More: more}, nil
}

// jobEnded is when a finished job's last task ended.
func (s *Store) jobEnded(j *Job) time.Time {
	end := j.UpdatedAt
	for _, id := range j.TaskIDs {
		if t := s.tasks[id]; t.UpdatedAt.After(end) {
			end = t.UpdatedAt
		}
	}
	return end
}

// removeJobs forgets the jobs in ids and everything kept for them: their
// tasks with attempts and output, the finish records under their tasks'
// submission ids, the idempotency keys that name them, and an acquire
// replay that would hand out one of their tasks.
func (s *Store) removeJobs(ids map[string]bool) {
	tasks := map[string]bool{}
	for id := range ids {
		j := s.jobs[id]
		for _, tid := range j.TaskIDs {
			tasks[tid] = true
			delete(s.tasks, tid)
			delete(s.logs, tid)
		}
		if set := s.openJobs[j.CreatedBy]; set != nil {
			delete(set, id)
		}
		delete(s.jobs, id)
	}
	order := s.jobOrder[:0]
	for _, id := range s.jobOrder {
		if !ids[id] {
			order = append(order, id)
		}
	}
	clear(s.jobOrder[len(order):])
	s.jobOrder = order
	for key := range s.submissions {
		if task, _, ok := strings.Cut(key, "/"); ok && tasks[task] {
			delete(s.submissions, key)
		}
	}
	for key, job := range s.idempotency {
		if ids[job] {
			delete(s.idempotency, key)
		}
	}
	for _, w := range s.workers {
		if w.LastAcquire != nil && tasks[w.LastAcquire.TaskID] {
			w.LastAcquire = nil
		}
	}
}
