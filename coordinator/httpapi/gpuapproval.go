package httpapi

import (
	"net/http"

	"github.com/gpulayer/gpulayer/coordinator/auth"
	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/coordinator/view"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// approveGPUs makes a worker's current GPU inventory its approved one:
// the GPUs that awaited approval (new, or with another memory size than
// approved) are offered from now on.
func (s *Server) approveGPUs(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	id, err := workerIDNoBody(r) // workerwrite.go
	if err != nil {
		return err
	}
	out, err := state.Propose[state.ApproveOutcome](r.Context(), s.propose, command.ApproveDevices{WorkerID: id, By: p.Name, Source: sourceString(r), Now: s.now()})
	if err != nil {
		return err
	}
	s.log.Info("worker GPUs approved", "worker_id", id, "by", p.Name, "brought_into_service", out.Approved)
	writeJSON(w, http.StatusOK, api.WorkerResponse{Worker: view.Worker(out.Worker)})
	return nil
}
