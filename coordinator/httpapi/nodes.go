package httpapi

import (
	"net/http"

	"github.com/gpulayer/gpulayer/coordinator/auth"
	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// registerNode records the HTTP address a coordinator of the Raft
// configuration is reached at. Every coordinator sends it to the leader
// once it follows one (a leader records its own as it takes office), so
// that the leader can copy artifacts to it and relay reads from it. Only
// another coordinator, verified by its peer certificate (the route is
// peerOnly), may call it, and only directly: a request forwarded by a
// follower may come from anyone behind it.
func (s *Server) registerNode(w http.ResponseWriter, r *http.Request, _ auth.Principal) error {
	if r.Header.Get(ForwardedHeader) != "" {
		return newError(api.CodeForbidden, "a coordinator registers its address directly with the leader, not through another coordinator")
	}
	var req api.NodeAddrRequest
	if _, err := decodeRequest(r, &req, false); err != nil {
		return err
	}
	if err := checkLen("http_addr", req.HTTPAddr, api.MaxNodeAddrBytes); err != nil {
		return err
	}
	if _, err := s.peerURL(req.HTTPAddr); err != nil {
		return invalidf("http_addr %s: %v", shortQuote(req.HTTPAddr), err)
	}
	id := r.PathValue("id")
	peers, err := s.cluster.Peers()
	if err != nil {
		return err
	}
	known := false
	for _, p := range peers {
		known = known || p.ID == id
	}
	if !known {
		return newError(api.CodeNotFound, "no coordinator %s in the Raft configuration", shortQuote(id))
	}
	if _, err := state.Propose[struct{}](r.Context(), s.propose, command.RegisterNode{NodeID: id, HTTPAddr: req.HTTPAddr}); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, api.SelfResponse{NodeID: id, HTTPAddr: req.HTTPAddr})
	return nil
}
