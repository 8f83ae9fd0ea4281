package httpapi

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
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

// Artifacts are content-addressed bytes. Uploads are writes, so they are
// forwarded to the leader, which stores the bytes in its data dir, has one
// other coordinator store a copy (artifactcopy.go), and only then
// replicates the record (digest, size, which nodes hold a copy): an
// acknowledged artifact survives the loss of any one coordinator. A read
// reaches the leader too; if it does not hold the bytes (leadership moved
// since the upload, or its disk lost them) it fetches them from a holder
// and relays them. Copies lost later are repaired (artifactrepair.go).

// artifactTransfer is how long one upload or download may take.
const artifactTransfer = 30 * time.Minute

func artifactDigest(r *http.Request) (string, error) {
	d := r.PathValue("sha256")
	if !blob.ValidDigest(d) {
		return "", invalidf("artifact name %q is not a sha256 digest (64 lowercase hex)", d)
	}
	return d, nil
}

func (s *Server) putArtifact(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	d, err := artifactDigest(r)
	if err != nil {
		return err
	}
	if s.blobs == nil {
		return fmt.Errorf("artifact store not configured")
	}
	if p.Kind == auth.KindWorker && !s.store.WorkerMayUpload(p.WorkerID) {
		return newError(api.CodeForbidden, "worker %s holds no task whose job declares outputs or a checkpoint: a worker uploads only its tasks' outputs and checkpoints", p.WorkerID)
	}
	if r.ContentLength > api.MaxArtifactBody {
		return newError(api.CodeBodyTooLarge, "artifact of %d bytes exceeds the %d byte cap", r.ContentLength, int64(api.MaxArtifactBody))
	}
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(artifactTransfer))
	if isArtifactCopy(r) {
		return s.storeCopy(w, r, d)
	}
	others, err := s.otherCoordinators()
	if err != nil {
		return err
	}
	need := min(2, 1+len(others))
	meta, recorded := s.store.Artifact(d)
	holders := liveHolders(meta.Holders, s.cluster.ID(), others)
	if recorded && len(holders) >= need {
		// Stored as often as it must be already: the bytes are not needed
		// to store it (a sender that waits for 100 Continue never sends
		// them) by one that may read it already. Anyone else proves them:
		// they are hashed, and only then does the uploader's team (or, a
		// worker, its finishes) get the artifact. A digest is not a
		// capability.
		proved := false
		if r.Header.Get("Expect") == "" || !s.mayReadArtifact(p, d) {
			if _, err := s.drainUpload(r, d); err != nil {
				return err
			}
			proved = true
		}
		rec := command.RecordArtifact{Digest: d, Size: meta.Size, Touch: true, Team: p.Team, Scoped: true, By: p.Name, Source: sourceString(r), Now: s.now()}
		if proved {
			rec.WorkerID = p.WorkerID
		}
		out, err := state.Propose[artifacts.Outcome](r.Context(), s.propose, rec)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, api.ArtifactResponse{Artifact: view.Artifact(out.Artifact)})
		return nil
	}
	var reserved int64
	var teams []string
	if !recorded {
		// New bytes count against the uploader's artifact quota, and its
		// team's.
		reserved = max(r.ContentLength, 0)
		teams = s.uploadTeams(p)
		release, err := s.artifactRoom(p, teams, reserved)
		if err != nil {
			return err
		}
		defer release()
	}
	size, err := s.storeUpload(r, d)
	if err != nil {
		return err
	}
	if !recorded && r.ContentLength < 0 {
		if err := s.checkArtifactRoom(p, teams, size, reserved); err != nil {
			return err
		}
	}
	if !slices.Contains(holders, s.cluster.ID()) {
		holders = append(holders, s.cluster.ID())
	}
	if len(holders) < need {
		node, err := s.pushCopy(r, d, size, others, holders)
		if err != nil {
			return err
		}
		holders = append(holders, node)
	}
	charge := ""
	if len(teams) > 0 {
		charge = teams[0]
	}
	out, err := state.Propose[artifacts.Outcome](r.Context(), s.propose, command.RecordArtifact{Digest: d, Size: size, NodeID: s.cluster.ID(), Holders: holders, Touch: recorded, Team: p.Team, ChargeTeam: charge, Scoped: true, WorkerID: p.WorkerID, By: p.Name, Source: sourceString(r), Now: s.now()})
	if err != nil {
		return err
	}
	status := http.StatusOK
	if out.Created {
		status = http.StatusCreated
	}
	s.log.Info("artifact stored", "sha256", d, "bytes", size, "by", p.Name, "holders", strings.Join(out.Artifact.Holders, ","))
	writeJSON(w, status, api.ArtifactResponse{Artifact: view.Artifact(out.Artifact)})
	return nil
}

// storeUpload stores the request's body in this node's blob store under
// d, and returns its size; a body that does not hash to d, is over the
// cap or breaks off is refused and nothing is stored.
func (s *Server) storeUpload(r *http.Request, d string) (int64, error) {
	size, err := s.blobs.Put(d, &artifactrepair.CappedReader{R: r.Body, Left: api.MaxArtifactBody, Err: errBodyTooLarge})
	return size, uploadError(d, err)
}

// drainUpload reads the request's body without storing it, and refuses it
// as storeUpload would when it does not hash to d.
func (s *Server) drainUpload(r *http.Request, d string) (int64, error) {
	h := sha256.New()
	n, err := io.Copy(h, &artifactrepair.CappedReader{R: r.Body, Left: api.MaxArtifactBody, Err: errBodyTooLarge})
	if err == nil && hex.EncodeToString(h.Sum(nil)) != d {
		err = fmt.Errorf("%w: the body hashes to %x", blob.ErrDigestMismatch, h.Sum(nil))
	}
	return n, uploadError(d, err)
}

// uploadError maps a failure to store an upload to its answer.
func uploadError(d string, err error) error {
	var mbe *http.MaxBytesError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, blob.ErrDigestMismatch):
		return invalidf("upload refused and not stored: %v, not to its name %s", err, d)
	case errors.Is(err, errBodyTooLarge), errors.As(err, &mbe):
		return newError(api.CodeBodyTooLarge, "artifact exceeds the %d byte cap; nothing was stored", int64(api.MaxArtifactBody))
	case errors.Is(err, blob.ErrStorage):
		// This node's disk failed (full, say), not the sender: an internal
		// error, whose detail (it names paths) goes to the log only.
		return err
	default:
		return invalidf("reading the upload: %v", err)
	}
}

// getArtifact serves a digest to a client with the read role, or to a
// worker that holds a task whose job lists the digest among its inputs.
// Anyone else gets 404, as for a digest that does not exist: possession of
// a digest is not a capability.
func (s *Server) getArtifact(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	d, err := artifactDigest(r)
	if err != nil {
		return err
	}
	if p.Kind == auth.KindWorker && !s.store.WorkerHoldsInput(p.WorkerID, d) {
		return newError(api.CodeNotFound, "no artifact %s among the inputs of the tasks worker %s holds", d, p.WorkerID)
	}
	meta, ok := s.store.Artifact(d)
	if !ok || (p.Kind == auth.KindClient && !s.mayReadArtifact(p, d)) {
		return newError(api.CodeNotFound, "no artifact %s", d) // another team's reads as missing
	}
	if s.blobs != nil {
		// A copy this node lacks, cannot read, or whose size is not the
		// record's (damaged: its checks repair it) is not served: the
		// bytes come from another holder instead.
		f, size, err := s.blobs.Open(d)
		switch {
		case err == nil && size == meta.Size:
			defer f.Close()
			serveBlob(w, f, size)
			return nil
		case err == nil:
			f.Close()
			s.log.Warn("this coordinator's copy of an artifact has the wrong size; serving another holder's", "sha256", d, "bytes", size, "recorded", meta.Size)
		case !errors.Is(err, blob.ErrNotFound):
			s.log.Warn("this coordinator cannot read its copy of an artifact; serving another holder's", "sha256", d, "error", err)
		}
	}
	if r.Header.Get(ArtifactLocalHeader) != "" {
		return newError(api.CodeNotFound, "artifact %s is not held by coordinator %s", d, s.cluster.ID())
	}
	return s.relayArtifact(w, r, meta)
}

// relayArtifact fetches an artifact from a coordinator that holds it and
// relays it. The holder authorises the request again on its own replica.
func (s *Server) relayArtifact(w http.ResponseWriter, r *http.Request, meta artifacts.Artifact) error {
	var tried []string
	for _, node := range meta.Holders {
		if node == s.cluster.ID() {
			continue
		}
		addr := s.store.NodeHTTPAddr(node)
		if addr == "" {
			continue
		}
		tried = append(tried, node)
		base, err := s.peerURL(addr)
		if err != nil {
			s.log.Warn("an artifact holder's recorded address is unusable", "holder", node, "address", addr, "error", err)
			continue
		}
		req, err := http.NewRequestWithContext(r.Context(), http.MethodGet, base.JoinPath(r.URL.Path).String(), nil)
		if err != nil {
			continue
		}
		req.Header.Set(api.ProtocolHeader, api.ProtocolVersion)
		req.Header.Set("Authorization", r.Header.Get("Authorization"))
		req.Header.Set(ArtifactLocalHeader, "1")
		req.Header.Set(ForwardedHeader, s.cluster.ID())
		forwardSource(r, req)
		resp, err := s.forwardTransport.RoundTrip(req)
		if err != nil {
			s.log.Warn("fetching an artifact from its holder failed", "sha256", meta.Digest, "holder", node, "error", err)
			continue
		}
		if resp.StatusCode != http.StatusOK {
			resp.Body.Close()
			s.log.Warn("artifact holder refused to serve it", "sha256", meta.Digest, "holder", node, "status", resp.StatusCode)
			continue
		}
		defer resp.Body.Close()
		_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(artifactTransfer))
		w.Header().Set("Content-Type", "application/octet-stream")
		if cl := resp.Header.Get("Content-Length"); cl != "" {
			w.Header().Set("Content-Length", cl)
		}
		w.WriteHeader(http.StatusOK)
		_, _ = io.Copy(w, resp.Body)
		return nil
	}
	return newError(api.CodeNotFound, "artifact %s is recorded but no coordinator holding it could serve it (holders %s; tried %s): its only copies are on coordinators that are gone or unreachable",
		meta.Digest, strings.Join(meta.Holders, ","), strings.Join(tried, ","))
}

// mayReadArtifact reports whether a client may read a recorded artifact:
// an admin any, others their team's. A worker is never answered yes: it
// reads only what its tasks stage (getArtifact), and proves what it puts.
func (s *Server) mayReadArtifact(p auth.Principal, d string) bool {
	if p.Kind != auth.KindClient {
		return false
	}
	return p.HasRole(auth.RoleAdmin) || s.store.ArtifactReadableBy(d, p.Team)
}
