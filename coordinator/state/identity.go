package state

import (
	"fmt"
	"sort"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/creds"
)

// reissueWorker replaces a worker's credential. The old credential is
// marked revoked and no longer names the worker's live credential, so it is
// refused at once. The worker's tasks are untouched: claims belong to the
// worker id, not to a credential, so the new credential finishes them.
func (s *Store) reissueWorker(c command.ReissueWorker) (WorkerRecord, error) {
	w, ok := s.workers[c.WorkerID]
	if !ok {
		return WorkerRecord{}, fmt.Errorf("worker %s: %w", c.WorkerID, ErrNotFound)
	}
	if w.Status == workerRevoked {
		return WorkerRecord{}, fmt.Errorf("worker %s is revoked; register a new worker id instead: %w", w.ID, ErrConflict)
	}
	if c.Credential.ID == "" || c.Credential.Hash == "" {
		return WorkerRecord{}, fmt.Errorf("%w: reissue without credential", ErrInvalid)
	}
	if s.credentials.Has(c.Credential.ID) {
		return WorkerRecord{}, fmt.Errorf("credential id collision: %w", ErrConflict)
	}
	old := w.CredentialID
	s.credentials.Revoke(old, c.By, c.Now)
	cred := c.Credential
	cred.WorkerID = w.ID
	s.credentials.Put(cred)
	w.CredentialID = cred.ID
	s.audit.Record(command.AuditEvent{Time: c.Now, Kind: "worker.reissued", Actor: c.By, WorkerID: w.ID, CredentialID: cred.ID, CredentialKind: creds.KindWorker, Subject: w.ID, Source: c.Source, Detail: "replaces credential " + old})
	return s.workerRecord(w), nil
}

// revokeWorker revokes a worker for good. Its credential dies, and every
// task it holds loses its attempt and goes back to the queue while attempts
// remain, all in this one apply. Revoking a revoked worker changes nothing.
func (s *Store) revokeWorker(c command.RevokeWorker) (WorkerRecord, error) {
	w, ok := s.workers[c.WorkerID]
	if !ok {
		return WorkerRecord{}, fmt.Errorf("worker %s: %w", c.WorkerID, ErrNotFound)
	}
	if w.Status == workerRevoked {
		return s.workerRecord(w), nil
	}
	s.revokeWorkerLocked(w, c.By, c.Source, "", c.Now)
	return s.workerRecord(w), nil
}

// revokeWorkerLocked revokes w: its credential dies and the tasks it holds
// are requeued or ended. why is added to the audit event.
func (s *Store) revokeWorkerLocked(w *Worker, by, source, why string, now time.Time) {
	w.Status = workerRevoked
	s.credentials.Revoke(w.CredentialID, by, now)
	s.audit.Record(command.AuditEvent{Time: now, Kind: "worker.revoked", Actor: by, WorkerID: w.ID, CredentialID: w.CredentialID, CredentialKind: creds.KindWorker, Subject: w.ID, Source: source, Detail: why})
	held := make([]string, 0, w.HeldCount())
	for id := range w.Held() {
		held = append(held, id)
	}
	sort.Strings(held)
	reason := "worker " + w.ID + " revoked"
	if by != "" {
		reason += " by " + by
	}
	for _, id := range held {
		t := s.ownTask(s.tasks.Get(id))
		s.endAttempt(t, attemptLost, nil, reason, now)
		s.requeueOrEnd(t, reason, now)
	}
	s.markPending() // wakes the worker's own long poll, which then sees the revocation
}
