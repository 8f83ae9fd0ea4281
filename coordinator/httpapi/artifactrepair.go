package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/artifactrepair"
	"github.com/gpulayer/gpulayer/coordinator/auth"
	"github.com/gpulayer/gpulayer/coordinator/blob"
	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/coordinator/state/artifacts"
	"github.com/gpulayer/gpulayer/coordinator/view"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// The peer routes of artifact repair (coordinator/artifactrepair decides
// what to check, drop, fetch and copy; this file carries its calls):
// GET /v1/operator/local/artifacts/{sha256} serves a coordinator's own
// copy, POST .../{sha256}/copy asks a coordinator to take one from the
// holders it names, and PUT /v1/operator/artifacts/{sha256}/holders/{id}
// asks the leader to record that a coordinator holds a copy, or no longer
// does. None takes a bearer credential: there is no client behind a
// repair, and only a verified coordinator certificate reaches them.

// maxCopySources bounds the holders a copy request names.
const maxCopySources = 16

// serveBlob streams an open blob of size bytes as the answer.
func serveBlob(w http.ResponseWriter, f io.Reader, size int64) {
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(artifactTransfer))
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
	w.WriteHeader(http.StatusOK)
	_, _ = io.Copy(w, f)
}

// serveLocalArtifact answers GET /v1/operator/local/artifacts/{sha256}, a
// peer route: this coordinator's own copy of the blob, for another
// coordinator that repairs its own or takes one. The caller verifies
// what it receives against the digest.
func (s *Server) serveLocalArtifact(w http.ResponseWriter, r *http.Request, _ auth.Principal) error {
	d, err := artifactDigest(r)
	if err != nil {
		return err
	}
	if s.blobs == nil {
		return newError(api.CodeNotFound, "coordinator %s keeps no artifacts", s.cluster.ID())
	}
	f, size, err := s.blobs.Open(d)
	if errors.Is(err, blob.ErrNotFound) {
		return newError(api.CodeNotFound, "coordinator %s holds no copy of artifact %s", s.cluster.ID(), d)
	}
	if err != nil {
		return err
	}
	defer f.Close()
	serveBlob(w, f, size)
	return nil
}

// artifactCopyRequest asks a coordinator to hold a verified copy of an
// artifact of Size bytes, fetched from one of Sources (coordinator ids,
// reached at the addresses its replica records) unless it has one.
type artifactCopyRequest struct {
	Size    int64    `json:"size"`
	Sources []string `json:"sources"`
}

// takeArtifactCopy answers POST /v1/operator/local/artifacts/{sha256}/copy,
// a peer route the leader calls: this coordinator makes sure its disk
// holds the bytes (it verifies a copy it has, else fetches one) and
// answers as storeCopy does. It records nothing: the leader does, once
// this answer says the bytes are here.
func (s *Server) takeArtifactCopy(w http.ResponseWriter, r *http.Request, _ auth.Principal) error {
	d, err := artifactDigest(r)
	if err != nil {
		return err
	}
	var req artifactCopyRequest
	if _, err := decodeRequest(r, &req, false); err != nil {
		return err
	}
	if req.Size < 0 || req.Size > api.MaxArtifactBody {
		return invalidf("size: %d is not 0 … %d", req.Size, int64(api.MaxArtifactBody))
	}
	if err := checkCount("sources", len(req.Sources), maxCopySources); err != nil {
		return err
	}
	for i, id := range req.Sources {
		if id == "" {
			return invalidf("sources[%d]: empty", i)
		}
		if err := checkLen(fmt.Sprintf("sources[%d]", i), id, api.MaxIDBytes); err != nil {
			return err
		}
	}
	if s.blobs == nil {
		return fmt.Errorf("artifact store not configured")
	}
	// The sources' addresses are read from this replica: first apply as
	// much as the leader had.
	s.awaitApplied(r)
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(artifactTransfer))
	from, err := s.repair.Obtain(r.Context(), d, req.Size, req.Sources)
	if err != nil {
		return newError(api.CodeNotFound, "coordinator %s could not take a copy of artifact %s: %v", s.cluster.ID(), d, err)
	}
	if from != "" {
		s.log.Info("artifact copy fetched", "sha256", d, "bytes", req.Size, "from", from)
	}
	writeJSON(w, http.StatusCreated, api.ArtifactResponse{Artifact: api.Artifact{SHA256: d, Size: req.Size, Holders: []string{s.cluster.ID()}}})
	return nil
}

// holderRequest asks the leader to record that the coordinator of the
// path holds a copy (Held, Size bytes, verified there) or no longer does.
type holderRequest struct {
	Held   bool   `json:"held"`
	Size   int64  `json:"size"`
	Reason string `json:"reason"`
}

// putArtifactHolder answers PUT /v1/operator/artifacts/{sha256}/holders/{id},
// a peer route: a coordinator reports, directly to the leader, that its
// copy is missing or damaged (held false) or that it fetched and verified
// one again (held true). Like a node's address, never taken forwarded.
func (s *Server) putArtifactHolder(w http.ResponseWriter, r *http.Request, _ auth.Principal) error {
	if r.Header.Get(ForwardedHeader) != "" {
		return newError(api.CodeForbidden, "a coordinator reports the artifacts it holds directly to the leader, not through another coordinator")
	}
	d, err := artifactDigest(r)
	if err != nil {
		return err
	}
	var req holderRequest
	if _, err := decodeRequest(r, &req, false); err != nil {
		return err
	}
	switch req.Reason {
	case artifactrepair.ReasonMissing, artifactrepair.ReasonDamaged:
		if req.Held {
			return invalidf("reason %s drops a holder: held must be false", req.Reason)
		}
	case artifactrepair.ReasonFetched:
		if !req.Held {
			return invalidf("reason %s adds a holder: held must be true", req.Reason)
		}
	default:
		return invalidf("reason: %s is not one of %s, %s, %s", shortQuote(req.Reason), artifactrepair.ReasonMissing, artifactrepair.ReasonDamaged, artifactrepair.ReasonFetched)
	}
	if req.Size < 0 || req.Size > api.MaxArtifactBody {
		return invalidf("size: %d is not 0 … %d", req.Size, int64(api.MaxArtifactBody))
	}
	id := r.PathValue("id")
	others, err := s.otherCoordinators()
	if err != nil {
		return err
	}
	if id != s.cluster.ID() && !slices.Contains(others, id) {
		return newError(api.CodeNotFound, "no coordinator %s in the Raft configuration", shortQuote(id))
	}
	out, err := state.Propose[artifacts.Outcome](r.Context(), s.propose, command.SetArtifactHolder{
		Digest: d, NodeID: id, Held: req.Held, Size: req.Size, Reason: req.Reason, By: artifactrepair.Actor, Now: s.now(),
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, api.ArtifactResponse{Artifact: view.Artifact(out.Artifact)})
	return nil
}

// NewArtifactChecker returns a checker of this coordinator's own copies.
func (s *Server) NewArtifactChecker() *artifactrepair.Checker { return s.repair.NewChecker() }

// ReplicateArtifacts runs one leader round of artifactrepair's
// Replicate (nothing on a coordinator that keeps no artifacts).
func (s *Server) ReplicateArtifacts(ctx context.Context, after string) (artifactrepair.ReplicationOutcome, string, error) {
	if s.blobs == nil {
		return artifactrepair.ReplicationOutcome{}, after, nil
	}
	return s.repair.Replicate(ctx, after)
}

// repairPeers carries artifact repair's calls to the other coordinators:
// mutual TLS to a verified peer certificate, no credential sent, and no
// credential in an error it returns.
type repairPeers struct{ s *Server }

var _ artifactrepair.Peers = repairPeers{}

func (p repairPeers) Self() string               { return p.s.cluster.ID() }
func (p repairPeers) IsLeader() bool             { return p.s.cluster.IsLeader() }
func (p repairPeers) Members() ([]string, error) { return p.s.otherCoordinators() }

// ReportToLeader asks the leader, on its peer route, to record that this
// coordinator holds d or does not.
func (p repairPeers) ReportToLeader(ctx context.Context, d string, size int64, held bool, reason string) error {
	addr := p.s.leaderHTTP()
	if addr == "" {
		return errors.New("no leader known")
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	resp, err := p.call(ctx, http.MethodPut, addr, holderRequest{Held: held, Size: size, Reason: reason}, "/v1/operator/artifacts/", d, "holders", p.Self())
	if err != nil {
		return fmt.Errorf("the leader: %w", err)
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
		return nil
	case http.StatusNotFound:
		e := readErrorBody(resp)
		if e.Error != nil && strings.HasPrefix(e.Error.Message, "no artifact ") {
			return artifactrepair.ErrNoRecord
		}
		return fmt.Errorf("the leader answered HTTP 404: %s", errorMessage(e))
	default:
		return fmt.Errorf("the leader answered HTTP %d: %s", resp.StatusCode, errorMessage(readErrorBody(resp)))
	}
}

// Open streams the copy of d the coordinator at addr serves from its
// disk; the caller verifies what it reads.
func (p repairPeers) Open(ctx context.Context, addr, d string) (io.ReadCloser, error) {
	ctx, cancel := context.WithTimeout(ctx, artifactTransfer)
	resp, err := p.call(ctx, http.MethodGet, addr, nil, "/v1/operator/local/artifacts/", d)
	if err != nil {
		cancel()
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		cancel()
		return nil, fmt.Errorf("answered HTTP %d", resp.StatusCode)
	}
	return cancelOnClose{ReadCloser: resp.Body, cancel: cancel}, nil
}

// AskCopy asks the coordinator at addr, on its peer route, to hold a
// verified copy of d; it must answer that it holds these very bytes.
func (p repairPeers) AskCopy(ctx context.Context, addr, d string, size int64, sources []string) error {
	ctx, cancel := context.WithTimeout(ctx, artifactTransfer)
	defer cancel()
	resp, err := p.call(ctx, http.MethodPost, addr, artifactCopyRequest{Size: size, Sources: sources}, "/v1/operator/local/artifacts/", d, "copy")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusCreated {
		return fmt.Errorf("answered HTTP %d: %s", resp.StatusCode, errorMessage(readErrorBody(resp)))
	}
	var got api.ArtifactResponse
	if err := json.NewDecoder(io.LimitReader(resp.Body, api.MaxJSONBody)).Decode(&got); err != nil {
		return fmt.Errorf("unreadable answer: %w", err)
	}
	if got.Artifact.SHA256 != d || got.Artifact.Size != size {
		return fmt.Errorf("answered that it holds %s (%d bytes), not %s (%d bytes)", shortQuote(got.Artifact.SHA256), got.Artifact.Size, d, size)
	}
	return nil
}

// call sends one peer request (body as JSON when not nil) to the
// coordinator at addr, at the path its elements join to. The applied
// index goes with it, so that the peer first applies as much as this
// coordinator has (the sources a copy request names are read there).
func (p repairPeers) call(ctx context.Context, method, addr string, body any, path ...string) (*http.Response, error) {
	base, err := p.s.peerURL(addr)
	if err != nil {
		return nil, err
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, base.JoinPath(path...).String(), rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set(api.ProtocolHeader, api.ProtocolVersion)
	req.Header.Set(AppliedIndexHeader, strconv.FormatUint(p.s.cluster.AppliedIndex(), 10))
	resp, err := p.s.forwardTransport.RoundTrip(req)
	if err != nil {
		return nil, errors.New(redactCredentials(err.Error()))
	}
	return resp, nil
}

// cancelOnClose ends a streamed answer's context when it is closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}

func readErrorBody(resp *http.Response) api.ErrorBody {
	var e api.ErrorBody
	_ = json.NewDecoder(io.LimitReader(resp.Body, api.MaxJSONBody)).Decode(&e)
	return e
}

func errorMessage(e api.ErrorBody) string {
	if e.Error == nil {
		return "(no error body)"
	}
	return string(e.Error.Code) + ": " + e.Error.Message
}
