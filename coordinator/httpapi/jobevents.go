package httpapi

import (
	"net/http"

	"github.com/gpulayer/gpulayer/coordinator/auth"
	"github.com/gpulayer/gpulayer/coordinator/view"
)

// jobEvents answers a job's events (docs/protocol.md, "Job events"),
// to whoever may read the job: another team's job is not found. The
// state lists its domain records; the view makes them the wire's.
func (s *Server) jobEvents(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	id := r.PathValue("id")
	if _, err := s.visibleJob(p, id); err != nil {
		return err
	}
	evs, truncated, err := s.store.JobEvents(id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, view.JobEvents(id, evs, truncated))
	return nil
}
