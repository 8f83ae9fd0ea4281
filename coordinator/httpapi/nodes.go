package httpapi

import (
	"net/http"
	"net/url"

	"github.com/gpulayer/gpulayer/coordinator/auth"
	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// registerNode records the HTTP address a coordinator of the Raft
// configuration is reached at. Every coordinator sends it to the leader
// once it follows one (a leader records its own as it takes office), so
// that the leader can copy artifacts to it and relay reads from it. Only
// a trusted proxy (another coordinator) may call it, and only directly:
// a request forwarded by a follower may come from anyone behind it.
func (s *Server) registerNode(w http.ResponseWriter, r *http.Request, _ auth.Principal) error {
	if !infoOf(r).peerTrusted || r.Header.Get(ForwardedHeader) != "" {
		return newError(api.CodeForbidden, "only a coordinator (a trusted proxy) registers its address, directly with the leader")
	}
	var req api.NodeAddrRequest
	if _, err := decodeRequest(r, &req, false); err != nil {
		return err
	}
	if err := checkLen("http_addr", req.HTTPAddr, api.MaxNodeAddrBytes); err != nil {
		return err
	}
	u, err := url.Parse(req.HTTPAddr)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return invalidf("http_addr %s is not an http(s)://host:port base URL", shortQuote(req.HTTPAddr))
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
