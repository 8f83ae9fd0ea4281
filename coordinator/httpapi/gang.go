package httpapi

import (
	"net"
	"net/http"
	"regexp"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/auth"
	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/coordinator/view"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// maxHostBytes bounds a rendezvous address (a DNS name's limit).
const maxHostBytes = 253

// hostnamePattern is a DNS host name: dot-separated labels of letters,
// digits and inner hyphens.
var hostnamePattern = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$`)

// validateRendezvous checks a rendezvous body: an attempt, an address
// that is an IP or a host name, a port in range.
func validateRendezvous(req *api.RendezvousRequest) error {
	if err := requireAttempt(req.AttemptID); err != nil {
		return err
	}
	if err := checkLen("attempt_id", req.AttemptID, api.MaxKeyBytes); err != nil {
		return err
	}
	switch {
	case req.Address == "":
		return invalidf("address is required: where this member's peers reach it")
	case len(req.Address) > maxHostBytes:
		return invalidf("address: %d bytes, at most %d", len(req.Address), maxHostBytes)
	case net.ParseIP(req.Address) == nil && !hostnamePattern.MatchString(req.Address):
		return invalidf("address %s is neither an IP address nor a host name", shortQuote(req.Address))
	case req.Port < 0 || req.Port > 65535:
		return invalidf("port must be between 0 and 65535")
	case req.WaitSeconds < 0 || req.WaitSeconds > api.MaxRendezvousWaitSeconds:
		return invalidf("wait_seconds must be between 0 and %d", api.MaxRendezvousWaitSeconds)
	}
	return nil
}

// rendezvous records where the caller's gang member is reached, then
// waits until every member of its gang has done so, or the wait ends.
func (s *Server) rendezvous(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	var req api.RendezvousRequest
	if _, err := decodeRequest(r, &req, false); err != nil {
		return err
	}
	if err := validateRendezvous(&req); err != nil {
		return err
	}
	taskID := r.PathValue("id")
	join := command.JoinRendezvous{TaskID: taskID, WorkerID: p.WorkerID, AttemptID: req.AttemptID, Address: req.Address, Port: req.Port, Now: s.now()}
	if _, err := state.Propose[struct{}](r.Context(), s.propose, join); err != nil {
		return err
	}
	wait := time.Duration(api.MaxRendezvousWaitSeconds) * time.Second
	if req.WaitSeconds > 0 {
		wait = time.Duration(req.WaitSeconds) * time.Second
	}
	deadline := s.clock.After(wait)
	for {
		changed := s.store.Changed()
		peers, ready, err := s.store.Rendezvous(taskID, p.WorkerID, req.AttemptID)
		if err != nil {
			return err
		}
		if ready {
			writeJSON(w, http.StatusOK, view.Rendezvous(peers))
			return nil
		}
		select {
		case <-changed:
		case <-deadline:
			writeJSON(w, http.StatusOK, api.RendezvousResponse{Ready: false})
			return nil
		case <-r.Context().Done():
			return r.Context().Err()
		}
	}
}
