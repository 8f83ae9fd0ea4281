package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// hbSender sends S3's heartbeats as a lean agent would: each worker's body
// encoded once (its devices and executors, no running tasks), its own
// bearer token, over a shared keep-alive pool. The same sender drives the
// coordinator and both no-auth references, so the client's cost is equal.
type hbSender struct {
	hc     *http.Client
	bodies [][]byte
	tokens []string
}

func newHBSender(hc *http.Client, workers []*simAgent) (*hbSender, error) {
	s := &hbSender{hc: hc}
	for _, w := range workers {
		b, err := json.Marshal(api.HeartbeatRequest{Devices: w.devices, Executors: w.executors})
		if err != nil {
			return nil, err
		}
		s.bodies = append(s.bodies, b)
		s.tokens = append(s.tokens, w.token)
	}
	return s, nil
}

func (s *hbSender) heartbeat(ctx context.Context, base string, k int) error {
	i := k % len(s.bodies)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/workers/self/heartbeat", bytes.NewReader(s.bodies[i]))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+s.tokens[i])
	return s.do(req)
}

func (s *hbSender) health(ctx context.Context, base string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v1/status/health", nil)
	if err != nil {
		return err
	}
	return s.do(req)
}

func (s *hbSender) do(req *http.Request) error {
	req.Header.Set(api.ProtocolHeader, api.ProtocolVersion)
	resp, err := s.hc.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: %s", req.Method, req.URL.Path, resp.Status)
	}
	return nil
}
