package coordinator

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/cluster"
	"github.com/gpulayer/gpulayer/coordinator/httpapi"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// self describes this coordinator for /v1/status/self.
func (s *Server) self() api.SelfResponse {
	_, leaderID := s.node.Leader()
	has, _ := s.node.HasState()
	return api.SelfResponse{NodeID: s.node.ID(), RaftAddr: s.node.Addr(), HTTPAddr: s.URL(), LeaderID: leaderID, HasState: has}
}

// form finds the founding members of a new cluster through the --join
// addresses and bootstraps once BootstrapExpect servers (this one
// included) have been seen. Every founder computes the same sorted list,
// so they all bootstrap the same configuration; Raft accepts that. If the
// peers already have a leader, the cluster exists and this server waits to
// be added by an operator.
func (s *Server) form(ctx context.Context) {
	log := s.cfg.Logger.With("component", "formation")
	hc := &http.Client{Timeout: 2 * time.Second, Transport: s.forward}
	tick := time.NewTicker(300 * time.Millisecond)
	defer tick.Stop()
	told := false
	var existingSince time.Time
	for {
		if _, id := s.node.Leader(); id != "" {
			return
		}
		if has, _ := s.node.HasState(); has {
			return
		}
		found := map[string]string{s.node.ID(): s.node.Addr()}
		existing := ""
		for _, u := range s.cfg.Join {
			peer, err := fetchSelf(ctx, hc, u, s.scheme == "https")
			if err != nil {
				continue
			}
			found[peer.NodeID] = peer.RaftAddr
			if peer.LeaderID != "" || peer.HasState {
				existing = u
			}
		}
		switch {
		case existing != "":
			// Founding peers that bootstrapped first look like an existing
			// cluster for a moment, until their first entry reaches us.
			if existingSince.IsZero() {
				existingSince = time.Now()
			}
			if !told && time.Since(existingSince) > 5*time.Second {
				log.Warn("the cluster already exists; waiting to be added",
					"peer", existing, "hint", fmt.Sprintf("gpulayer operator raft add-peer --node-id %s --raft-addr %s", s.node.ID(), s.node.Addr()))
				told = true
			}
		case s.cfg.BootstrapExpect > 1 && len(found) == s.cfg.BootstrapExpect:
			servers := make([]cluster.Server, 0, len(found))
			for id, addr := range found {
				servers = append(servers, cluster.Server{ID: id, Address: addr})
			}
			sort.Slice(servers, func(i, j int) bool { return servers[i].ID < servers[j].ID })
			if err := s.node.BootstrapWith(servers); err != nil {
				log.Error("bootstrap failed", "error", err)
			} else {
				log.Info("bootstrapped a new cluster", "servers", len(servers))
			}
			return
		case s.cfg.BootstrapExpect > 1 && len(found) > s.cfg.BootstrapExpect:
			if !told {
				log.Error("more servers answered than --bootstrap-expect; not bootstrapping", "found", len(found), "expect", s.cfg.BootstrapExpect)
				told = true
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// fetchSelf asks the coordinator at base who it is (/v1/status/self).
// The call runs over mutual TLS with peer certificates, like every call
// between coordinators, so the Raft address a founder is told comes from
// a verified coordinator of the cluster.
func fetchSelf(ctx context.Context, hc *http.Client, base string, httpsPeers bool) (api.SelfResponse, error) {
	u, err := httpapi.PeerURL(base, httpsPeers)
	if err != nil {
		return api.SelfResponse{}, fmt.Errorf("--join %s: %w", base, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.JoinPath("/v1/status/self").String(), nil)
	if err != nil {
		return api.SelfResponse{}, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return api.SelfResponse{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return api.SelfResponse{}, fmt.Errorf("status %d", resp.StatusCode)
	}
	var out api.SelfResponse
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return api.SelfResponse{}, err
	}
	if out.NodeID == "" || out.RaftAddr == "" {
		return api.SelfResponse{}, fmt.Errorf("peer %s did not say who it is", base)
	}
	return out, nil
}
