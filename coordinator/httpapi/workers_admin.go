package httpapi

import (
	"net/http"

	"github.com/gpulayer/gpulayer/coordinator/auth"
	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/coordinator/view"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// The admin worker routes change a worker's credential or revoke it. The
// handler mints the credential (random) and stamps the time; the state
// machine decides whether the worker exists and may be changed.

// emptyBody accepts no body, {} or nothing else.
func emptyBody(r *http.Request) error {
	var empty struct{}
	_, err := decodeRequest(r, &empty, true)
	return err
}

func (s *Server) reissueWorker(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	id := r.PathValue("id")
	if err := validateID("worker id", id); err != nil {
		return err
	}
	if err := emptyBody(r); err != nil {
		return err
	}
	minted, err := auth.Mint(api.PrefixWorker)
	if err != nil {
		return err
	}
	now := s.now()
	rec, err := state.Propose[state.WorkerRecord](r.Context(), s.propose, command.ReissueWorker{
		WorkerID:   id,
		Credential: command.CredentialRecord{ID: minted.Token.ID, Kind: string(auth.KindWorker), Name: id, Hash: minted.Hash, CreatedAt: now},
		By:         p.Name,
		Now:        now,
		Source:     sourceString(r),
	})
	if err != nil {
		return err
	}
	s.log.Info("worker credential reissued", "worker_id", id, "by", p.Name, "credential_id", minted.Token.ID)
	wk := view.Worker(rec)
	writeJSON(w, http.StatusOK, api.ReissueResponse{WorkerID: id, WorkerToken: minted.Token.String(), Status: wk.Status, Worker: &wk})
	return nil
}

func (s *Server) revokeWorker(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	id, err := workerIDNoBody(r)
	if err != nil {
		return err
	}
	return s.proposeWorkerWrite(w, r, command.RevokeWorker{WorkerID: id, By: p.Name, Now: s.now(), Source: sourceString(r)}, "worker revoked", "worker_id", id, "by", p.Name)
}

// approveWorker lets a pending worker (registered with a join token that
// requires approval) heartbeat and take work.
func (s *Server) approveWorker(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	id, err := workerIDNoBody(r)
	if err != nil {
		return err
	}
	return s.proposeWorkerWrite(w, r, command.ApproveWorker{WorkerID: id, By: p.Name, Source: sourceString(r), Now: s.now()}, "worker approved", "worker_id", id, "by", p.Name)
}
