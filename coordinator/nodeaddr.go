package coordinator

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/httpapi"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// announceAddr tells the leader this follower's HTTP address when the
// replicated state does not have it (or has another one): the leader
// copies artifacts to it and relays reads from it by that address. The
// call runs over mutual TLS with this coordinator's peer certificate,
// which is what the leader's route takes, never a source address.
func (s *Server) announceAddr(ctx context.Context) error {
	self := s.URL()
	if s.store.NodeHTTPAddr(s.node.ID()) == self {
		return nil
	}
	_, leaderID := s.node.Leader()
	leader := s.store.NodeHTTPAddr(leaderID)
	if leaderID == "" || leaderID == s.node.ID() || leader == "" {
		return nil
	}
	body, err := json.Marshal(api.NodeAddrRequest{HTTPAddr: self})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	base, err := httpapi.PeerURL(leader, s.scheme == "https")
	if err != nil {
		return fmt.Errorf("leader %s: %w", leaderID, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, base.JoinPath("/v1/operator/nodes/", s.node.ID()).String(), bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(api.ProtocolHeader, api.ProtocolVersion)
	resp, err := s.forward.RoundTrip(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("leader %s answered HTTP %d", leaderID, resp.StatusCode)
	}
	return nil
}
