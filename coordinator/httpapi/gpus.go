package httpapi

import (
	"net/http"

	"github.com/gpulayer/gpulayer/coordinator/auth"
	"github.com/gpulayer/gpulayer/coordinator/view"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// listGPUs is the fleet's GPU view (GET /v1/gpus, admin, as the worker
// list is): one row per GPU of every registered worker, or of the one
// ?worker= names, with its health and what runs on it. The answer is
// bounded by the fleet: the registered workers, each with at most
// api.MaxDevices devices.
func (s *Server) listGPUs(w http.ResponseWriter, r *http.Request, _ auth.Principal) error {
	q, err := queryOf(r, "worker")
	if err != nil {
		return err
	}
	if id := q["worker"]; id != "" {
		if err := validateID("worker", id); err != nil {
			return err
		}
	}
	ws, err := s.store.FleetGPUs(q["worker"])
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, api.GPUList{GPUs: view.GPUs(ws)})
	return nil
}
