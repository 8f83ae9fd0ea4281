package state

import (
	"fmt"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/creds"
	"github.com/gpulayer/gpulayer/coordinator/state/fleetctl"
)

// An admin forgets a worker that is dead (offline), revoked or was never
// approved (fleetctl.Forgettable), so that it leaves the worker list and
// the fleet's GPU counts.

// forgetWorker applies ForgetWorker: the record as it was before it went.
func (s *Store) forgetWorker(c command.ForgetWorker) (WorkerRecord, error) {
	w, ok := s.workers[c.WorkerID]
	if !ok {
		return WorkerRecord{}, fmt.Errorf("worker %s: %w", c.WorkerID, ErrNotFound)
	}
	if err := fleetctl.Forgettable(w); err != nil {
		return WorkerRecord{}, err
	}
	rec := s.workerRecord(w)
	s.dropWorker(w, c.Now)
	s.audit.Record(command.AuditEvent{Time: c.Now, Kind: "worker.forgotten", Actor: c.By, WorkerID: w.ID, CredentialID: w.CredentialID, CredentialKind: creds.KindWorker,
		Subject: w.ID, Source: c.Source, Detail: "was " + w.Status})
	return rec, nil
}

// dropWorker removes w and what is kept for it alone: its credential (its
// token then answers 401), its record, and its membership of every group,
// so that a worker registered later under the same id inherits nothing.
// The caller records why in the audit log.
func (s *Store) dropWorker(w *Worker, now time.Time) {
	s.credentials.Delete(w.CredentialID)
	delete(s.workers, w.ID)
	s.groups.DropWorker(w.ID, now)
}
