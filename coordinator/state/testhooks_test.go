package state

import (
	"io"

	"github.com/gpulayer/gpulayer/coordinator/sched/place"
	"github.com/gpulayer/gpulayer/coordinator/state/output"
)

// Reads and entry points only the state's own tests use: kept out of the
// Store the coordinator builds.

// AuditSizes reports how many events each ring holds now.
func (s *Store) AuditSizes() (events, refusals int) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	e, r, _ := s.audit.Frozen()
	return len(e), len(r)
}

// InGroup reports whether worker belongs to group, directly or through
// nested groups, in the state as it is now.
func (s *Store) InGroup(workerID, groupID string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.groups.Contains(workerID, groupID)
}

// PlanGang places every task of gang job jobID, the worker workerID
// (whose acquire asks for up to slots tasks, narrowed by capability)
// taking the first ranks it can and the other ready workers, nearest it
// first (place.ByTopology: its NVLink domain, switch and rack; then the
// switches with most room; in id order where no labels say), the rest,
// each within its free slots (place's freeSlots). It reports
// false when the job is not a gang whose tasks are all pending, or when
// the fleet cannot take them all now, or when workerID can take none.
func (s *Store) PlanGang(workerID, capability string, slots int, jobID string) ([]place.Member, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	w, ok := s.workers[workerID]
	j, jok := s.jobs.Lookup(jobID)
	if !ok || !jok || !j.Spec.Gang {
		return nil, false
	}
	ts, ok := s.gangTasks(j)
	if !ok {
		return nil, false
	}
	return place.Gang(s.planView(), w, capability, slots, j, ts, place.NewTentative())
}

// RestoreWithOutput replaces the state with a snapshot's store section
// and the output with out, together, and takes out over: PrepareTables,
// then RestorePrepared.
func (s *Store) RestoreWithOutput(section io.Reader, out output.Restore) error {
	t, err := PrepareTables(section)
	if err != nil {
		out.Discard()
		return err
	}
	return s.RestorePrepared(t, out)
}

// HasArtifact reports whether digest has a record.
func (s *Store) HasArtifact(digest string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.artifacts.Has(digest)
}
