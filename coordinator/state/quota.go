package state

import (
	"errors"
	"fmt"
)

// ErrQuotaExceeded refuses a submission over its client's quota of jobs
// that have not ended.
var ErrQuotaExceeded = errors.New("quota exceeded")

// The pending-jobs quota is decided inside Apply, against an index the
// state machine keeps: per client name, the ids of jobs that may not have
// ended. Two submissions racing for the last slot are two log entries
// applied one after the other, so only one fits. The index is pruned
// lazily (a job that ended leaves it at its owner's next submission) and
// is not part of the snapshot: it is rebuilt from the jobs, and the count
// after pruning, which is all a decision reads, is the same on every
// replica whatever pruning each has done.

// openJobsOf counts the jobs of owner that have not ended, pruning those
// that have. Called with mu held, inside Apply.
func (s *Store) openJobsOf(owner string) int {
	set := s.openJobsIndex()[owner]
	for id := range set {
		if j, ok := s.jobs.Lookup(id); !ok || s.jobTerminal(j) {
			delete(set, id)
		}
	}
	if len(set) == 0 {
		delete(s.openJobs, owner)
	}
	return len(set)
}

// noteOpenJob adds a new job to its owner's index.
func (s *Store) noteOpenJob(j *Job) {
	set := s.openJobsIndex()[j.CreatedBy]
	if set == nil {
		set = map[string]struct{}{}
		s.openJobs[j.CreatedBy] = set
	}
	set[j.ID] = struct{}{}
}

// openJobsIndex returns the index, built from the jobs when a restore or
// a reset left none.
func (s *Store) openJobsIndex() map[string]map[string]struct{} {
	if s.openJobs == nil {
		s.rebuildOpenJobs()
	}
	return s.openJobs
}

// rebuildOpenJobs indexes every job that has not ended.
func (s *Store) rebuildOpenJobs() {
	s.openJobs = map[string]map[string]struct{}{}
	for _, j := range s.jobs.All() {
		if s.jobTerminal(j) {
			continue
		}
		set := s.openJobs[j.CreatedBy]
		if set == nil {
			set = map[string]struct{}{}
			s.openJobs[j.CreatedBy] = set
		}
		set[j.ID] = struct{}{}
	}
}

// checkPendingQuota refuses a new job of owner when limit (> 0) of its
// jobs have not ended.
func (s *Store) checkPendingQuota(owner string, limit int) error {
	if limit <= 0 {
		return nil
	}
	// Unpruned, the set holds every job of owner that has not ended and
	// some that have: while even that is under the limit, so is the count,
	// and pruning (a look at each job in the set) waits until it is not.
	// The decision is the same either way, on every replica.
	if len(s.openJobsIndex()[owner]) < limit {
		return nil
	}
	if n := s.openJobsOf(owner); n >= limit {
		return fmt.Errorf("client %q has %d jobs that have not ended, at most %d: %w", owner, n, limit, ErrQuotaExceeded)
	}
	return nil
}
