package httpapi

import (
	"fmt"
	"net/http"

	"github.com/gpulayer/gpulayer/coordinator/auth"
	"github.com/gpulayer/gpulayer/sdk/api"
)

func (s *Server) health(w http.ResponseWriter, r *http.Request, _ auth.Principal) error {
	_, leaderID := s.cluster.Leader()
	writeJSON(w, http.StatusOK, api.HealthResponse{
		Status:   "ok",
		NodeID:   s.cluster.ID(),
		Leader:   s.leaderHTTP(),
		IsLeader: s.cluster.IsLeader(),
		Ready:    leaderID != "",
	})
	return nil
}

func (s *Server) leader(w http.ResponseWriter, r *http.Request, _ auth.Principal) error {
	addr, id := s.cluster.Leader()
	if id == "" {
		return errNoLeader
	}
	writeJSON(w, http.StatusOK, api.LeaderResponse{Leader: s.leaderHTTP(), LeaderID: id, LeaderRaft: addr})
	return nil
}

func (s *Server) peers(w http.ResponseWriter, r *http.Request, _ auth.Principal) error {
	peers, err := s.cluster.Peers()
	if err != nil {
		return fmt.Errorf("list peers: %w", err)
	}
	writeJSON(w, http.StatusOK, api.PeersResponse{Peers: peers})
	return nil
}
