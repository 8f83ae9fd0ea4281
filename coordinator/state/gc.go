package state

import (
	"fmt"
	"strings"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/deps"
)

// GCOutcome is the outcome of CollectGarbage: how many jobs it removed,
// and whether more jobs were due than its limit let it remove.
type GCOutcome struct {
	Removed int
	// Artifacts is how many artifact records it removed.
	Artifacts int
	More      bool
}

// collectGarbage removes the finished jobs that CollectGarbage's policy
// makes due, oldest first (by creation, the log's order), up to its limit.
func (s *Store) collectGarbage(c command.CollectGarbage) (GCOutcome, error) {
	if c.OlderThan < 0 || c.KeepFinished < 0 || c.Limit < 0 {
		return GCOutcome{}, fmt.Errorf("%w: negative garbage collection bound", ErrInvalid)
	}
	finished := 0
	for _, id := range s.jobOrder {
		if s.jobTerminal(s.jobs.Get(id)) {
			finished++
		}
	}
	s.usage.Fold(c.Now)
	cutoff := c.Now.Add(-c.OlderThan)
	due := map[string]bool{}
	more := false
	for _, id := range s.jobOrder {
		j := s.jobs.Get(id)
		if !s.jobTerminal(j) {
			continue
		}
		old := !deps.EndedAt(depTables{s}, j).After(cutoff)
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
	out := GCOutcome{Removed: len(due), More: more}
	if len(due) > 0 {
		s.removeJobs(due)
		s.audit.Record(command.AuditEvent{Time: c.Now, Kind: "jobs.collected", Actor: c.By, Source: c.Source,
			Detail: fmt.Sprintf("%d finished jobs removed (older than %v, or beyond the newest %d)", len(due), c.OlderThan, c.KeepFinished)})
	}
	if c.Artifacts && !more {
		// Only once no job is left due: an artifact that a job due in a
		// later batch names is collected with it, in that batch.
		n, moreArts := s.collectArtifacts(cutoff, c.Limit)
		out.Artifacts, out.More = n, moreArts
		if n > 0 {
			s.audit.Record(command.AuditEvent{Time: c.Now, Kind: "artifacts.collected", Actor: c.By, Source: c.Source,
				Detail: fmt.Sprintf("%d artifacts no job names removed (uploaded before %s)", n, cutoff.UTC().Format(time.RFC3339))})
		}
	}
	return out, nil
}

// collectArtifacts removes the records of artifacts that no job names (as
// an input, or a task's output) and that were uploaded at or before
// cutoff, up to limit (0: no limit), in digest order. It reports how many
// it removed and whether more were due. The bytes are removed by each
// coordinator from its own disk, outside Apply (blob sweeps).
func (s *Store) collectArtifacts(cutoff time.Time, limit int) (int, bool) {
	named := map[string]bool{}
	for _, j := range s.jobs.All() {
		for _, in := range j.Spec.Inputs {
			named[in.SHA256] = true
		}
		for _, id := range j.TaskIDs {
			t := s.tasks.Get(id)
			for _, a := range t.Artifacts {
				named[a.SHA256] = true
			}
			if t.Checkpoint != nil { // its latest only: one replaced is collected
				named[t.Checkpoint.SHA256] = true
			}
		}
	}
	return s.artifacts.Collect(named, cutoff, limit)
}

// removeJobs forgets the jobs in ids and everything kept for them: their
// tasks with attempts and output, the finish records under their tasks'
// submission ids, the idempotency keys that name them, and an acquire
// replay that would hand out one of their tasks.
func (s *Store) removeJobs(ids map[string]bool) {
	tasks := map[string]bool{}
	for id := range ids {
		j := s.jobs.Get(id)
		for _, tid := range j.TaskIDs {
			tasks[tid] = true
			s.dropOutput(s.tasks.Get(tid))
			s.tasks.Del(tid)
		}
		if set := s.openJobs[j.CreatedBy]; set != nil {
			delete(set, id)
		}
		s.jobs.Del(id)
	}
	// A new array: the old one may be shared with a capture.
	order := make([]string, 0, len(s.jobOrder)-len(ids))
	for _, id := range s.jobOrder {
		if !ids[id] {
			order = append(order, id)
		}
	}
	s.jobOrder = order
	for key := range s.submissions.All() {
		if task, _, ok := strings.Cut(key, "/"); ok && tasks[task] {
			s.submissions.Del(key)
		}
	}
	for key, job := range s.idempotency.All() {
		if ids[job] {
			s.idempotency.Del(key)
		}
	}
	for _, w := range s.workers {
		if w.LastAcquire != nil && tasks[w.LastAcquire.TaskID] {
			w.LastAcquire = nil
		}
	}
}
