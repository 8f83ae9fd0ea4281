package httpapi

import (
	"net/http"

	"github.com/gpulayer/gpulayer/coordinator/auth"
	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/coordinator/view"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// forgetWorker forgets a revoked, offline or unapproved worker that holds
// no task (DELETE /v1/workers/{id}): it leaves the worker list and the
// fleet's GPU counts, its credential goes, and the audit log keeps who
// forgot it. The answer is the record as it was. A worker that is live,
// or still holds a task, is 409; an unknown one 404.
func (s *Server) forgetWorker(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	id := r.PathValue("id")
	if err := validateID("worker id", id); err != nil {
		return err
	}
	if err := emptyBody(r); err != nil {
		return err
	}
	wk, err := state.Propose[state.WorkerRecord](r.Context(), s.propose, command.ForgetWorker{WorkerID: id, By: p.Name, Source: sourceString(r), Now: s.now()})
	if err != nil {
		return err
	}
	s.log.Info("worker forgotten", "worker_id", id, "was", wk.Worker.Status, "by", p.Name)
	writeJSON(w, http.StatusOK, api.WorkerResponse{Worker: view.Worker(wk)})
	return nil
}
