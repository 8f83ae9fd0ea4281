package state

import (
	"fmt"
	"sort"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// reissueWorker replaces a worker's credential. The old credential is
// marked revoked and no longer names the worker's live credential, so it is
// refused at once. The worker's tasks are untouched: claims belong to the
// worker id, not to a credential, so the new credential finishes them.
func (s *Store) reissueWorker(c command.ReissueWorker) Result {
	w, ok := s.workers[c.WorkerID]
	if !ok {
		return Result{Err: fmt.Errorf("worker %s: %w", c.WorkerID, ErrNotFound)}
	}
	if w.Status == api.WorkerRevoked {
		return Result{Err: fmt.Errorf("worker %s is revoked; register a new worker id instead: %w", w.ID, ErrConflict)}
	}
	if c.Credential.ID == "" || c.Credential.Hash == "" {
		return Result{Err: fmt.Errorf("%w: reissue without credential", ErrInvalid)}
	}
	if _, dup := s.credentials[c.Credential.ID]; dup {
		return Result{Err: fmt.Errorf("credential id collision: %w", ErrConflict)}
	}
	if old, ok := s.credentials[w.CredentialID]; ok {
		old.Revoked = true
	}
	cred := c.Credential
	cred.WorkerID = w.ID
	s.credentials[cred.ID] = &Credential{CredentialRecord: cred}
	w.CredentialID = cred.ID
	return Result{Value: s.workerView(w)}
}

// revokeWorker revokes a worker for good. Its credential dies, and every
// task it holds loses its attempt and goes back to the queue while attempts
// remain, all in this one apply. Revoking a revoked worker changes nothing.
func (s *Store) revokeWorker(c command.RevokeWorker) Result {
	w, ok := s.workers[c.WorkerID]
	if !ok {
		return Result{Err: fmt.Errorf("worker %s: %w", c.WorkerID, ErrNotFound)}
	}
	if w.Status == api.WorkerRevoked {
		return Result{Value: s.workerView(w)}
	}
	w.Status = api.WorkerRevoked
	if cred, ok := s.credentials[w.CredentialID]; ok {
		cred.Revoked = true
	}
	held := make([]string, 0, len(w.active))
	for id := range w.active {
		held = append(held, id)
	}
	sort.Strings(held)
	reason := "worker " + w.ID + " revoked"
	if c.By != "" {
		reason += " by " + c.By
	}
	for _, id := range held {
		t := s.tasks[id]
		s.endAttempt(t, api.AttemptLost, nil, reason, c.Now)
		s.requeueOrEnd(t, reason, c.Now)
	}
	s.markPending() // wakes the worker's own long poll, which then sees the revocation
	return Result{Value: s.workerView(w)}
}
