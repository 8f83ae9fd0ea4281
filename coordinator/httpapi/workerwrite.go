package httpapi

import (
	"net/http"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/coordinator/view"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// Most admin routes on one worker read the same way: the worker id from
// the path, no body, one command proposed, the worker answered as the
// write left it. These two are that edge; each handler says only which
// command.

// workerIDNoBody reads and bounds the route's worker id, of a request
// that takes no body.
func workerIDNoBody(r *http.Request) (string, error) {
	id := r.PathValue("id")
	if err := validateID("worker id", id); err != nil {
		return "", err
	}
	if err := emptyBody(r); err != nil {
		return "", err
	}
	return id, nil
}

// proposeWorkerWrite proposes c, a write about one worker, logs did with
// attrs and the worker's status after it, and answers {worker}.
func (s *Server) proposeWorkerWrite(w http.ResponseWriter, r *http.Request, c command.Command, did string, attrs ...any) error {
	rec, err := state.Propose[state.WorkerRecord](r.Context(), s.propose, c)
	if err != nil {
		return err
	}
	s.log.Info(did, append(attrs, "status", rec.Worker.Status)...)
	writeJSON(w, http.StatusOK, api.WorkerResponse{Worker: view.Worker(rec)})
	return nil
}
