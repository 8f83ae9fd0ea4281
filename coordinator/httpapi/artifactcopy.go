package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// An upload is acknowledged only once two coordinators hold its bytes
// (one, in a cluster of one): the leader that received it, and one other
// it pushed a copy to with ArtifactLocalHeader, which that coordinator
// honours only from a trusted proxy and authorises again on its own
// replica. The record that lists both is written after both copies are on
// disk; a copy that is never recorded is swept from its disk later
// (coordinator/artifactsweep.go).

// copyAppliedWait bounds how long a coordinator asked to store a copy
// waits to have applied what the leader had (AppliedIndexHeader).
const copyAppliedWait = 5 * time.Second

// otherCoordinators lists the ids of the Raft configuration's servers
// other than this one.
func (s *Server) otherCoordinators() ([]string, error) {
	peers, err := s.cluster.Peers()
	if err != nil {
		return nil, fmt.Errorf("listing the coordinators: %w", err)
	}
	var out []string
	for _, p := range peers {
		if p.ID != s.cluster.ID() {
			out = append(out, p.ID)
		}
	}
	slices.Sort(out)
	return out, nil
}

// liveHolders keeps the holders that are still coordinators of the
// cluster (self or one of others).
func liveHolders(holders []string, self string, others []string) []string {
	var out []string
	for _, h := range holders {
		if h == self || slices.Contains(others, h) {
			out = append(out, h)
		}
	}
	return out
}

// pushCopy has one coordinator of others that is not among holders store
// a copy of the blob d (size bytes, held here), trying each in turn, and
// returns its id. When none can, the upload is refused: the answer would
// promise a second copy that does not exist.
func (s *Server) pushCopy(r *http.Request, d string, size int64, others, holders []string) (string, error) {
	var failed []string
	for _, node := range others {
		if slices.Contains(holders, node) {
			continue
		}
		addr := s.store.NodeHTTPAddr(node)
		if addr == "" {
			failed = append(failed, node+" (no address recorded)")
			continue
		}
		err := s.sendCopy(r, addr, d, size)
		if err == nil {
			return node, nil
		}
		s.log.Warn("a coordinator could not store a copy of an artifact", "sha256", d, "coordinator", node, "error", redactCredentials(err.Error()))
		failed = append(failed, node)
	}
	return "", newError(api.CodeNoLeader, "artifact %s was stored on coordinator %s only: no other coordinator could take a copy (tried %s), so it is not acknowledged; retry once another coordinator is up",
		d, s.cluster.ID(), strings.Join(failed, ", "))
}

// sendCopy PUTs this node's blob d to the coordinator at addr.
func (s *Server) sendCopy(in *http.Request, addr, d string, size int64) error {
	f, _, err := s.blobs.Open(d)
	if err != nil {
		return err
	}
	defer f.Close()
	ctx, cancel := context.WithTimeout(in.Context(), artifactTransfer)
	defer cancel()
	base, err := s.peerURL(addr)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, base.JoinPath("/v1/artifacts/", d).String(), f)
	if err != nil {
		return err
	}
	req.ContentLength = size
	req.Header.Set("Content-Type", "application/octet-stream")
	req.Header.Set(api.ProtocolHeader, api.ProtocolVersion)
	req.Header.Set("Authorization", in.Header.Get("Authorization"))
	req.Header.Set(ArtifactLocalHeader, "1")
	req.Header.Set(ForwardedHeader, s.cluster.ID())
	req.Header.Set(AppliedIndexHeader, strconv.FormatUint(s.cluster.AppliedIndex(), 10))
	forwardSource(in, req)
	resp, err := s.forwardTransport.RoundTrip(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusCreated {
		return fmt.Errorf("answered HTTP %d", resp.StatusCode)
	}
	// The holder is recorded only if it says it holds these very bytes.
	var got api.ArtifactResponse
	if err := json.NewDecoder(io.LimitReader(resp.Body, api.MaxJSONBody)).Decode(&got); err != nil {
		return fmt.Errorf("unreadable answer: %w", err)
	}
	if got.Artifact.SHA256 != d || got.Artifact.Size != size {
		return fmt.Errorf("answered that it stored %s (%d bytes), not %s (%d bytes)", shortQuote(got.Artifact.SHA256), got.Artifact.Size, d, size)
	}
	return nil
}

// storeCopy stores the copy another coordinator (the leader) sent, in
// this node's blob store only: the leader records it.
func (s *Server) storeCopy(w http.ResponseWriter, r *http.Request, d string) error {
	size, err := s.storeUpload(r, d)
	if err != nil {
		return err
	}
	s.log.Info("artifact copy stored", "sha256", d, "bytes", size, "for", r.Header.Get(ForwardedHeader))
	writeJSON(w, http.StatusCreated, api.ArtifactResponse{Artifact: api.Artifact{SHA256: d, Size: size, Holders: []string{s.cluster.ID()}}})
	return nil
}

// awaitApplied holds a copy request until this node has applied the
// leader's index it carries (or copyAppliedWait passed), so that it
// authenticates the request against as recent a state as the leader did.
func (s *Server) awaitApplied(r *http.Request) {
	want, err := strconv.ParseUint(r.Header.Get(AppliedIndexHeader), 10, 64)
	if err != nil || s.cluster.AppliedIndex() >= want {
		return
	}
	deadline := time.NewTimer(copyAppliedWait)
	defer deadline.Stop()
	// The index moves after the store applied an entry, so a change is
	// also looked at again a moment later.
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for s.cluster.AppliedIndex() < want {
		select {
		case <-s.store.Changed():
		case <-tick.C:
		case <-deadline.C:
			return
		case <-r.Context().Done():
			return
		}
	}
}
