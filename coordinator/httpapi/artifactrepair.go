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

	"github.com/gpulayer/gpulayer/coordinator/auth"
	"github.com/gpulayer/gpulayer/coordinator/blob"
	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/coordinator/view"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// Artifacts outlive any node (issue 27). The holders a record lists are a
// promise that their disks have the bytes; two things keep it:
//
//   - Each coordinator checks the copies the state says it holds
//     (ArtifactChecker): a file that is missing, of the wrong size, or that
//     no longer hashes to its name is first dropped from the record (a
//     SetArtifactHolder the leader proposes), then fetched again from
//     another holder, verified as it is stored, and only then recorded
//     again. A node never stays listed for bytes it found it lacks.
//   - The leader finds the artifacts that have fewer live holders (holders
//     that are coordinators of the Raft configuration) than min(2,
//     cluster size) and has another coordinator fetch a copy
//     (ReplicateArtifacts); it records that coordinator only once it
//     answered that it verified the bytes on its disk.
//
// Three peer routes carry this, none with a bearer credential (there is
// no client behind a repair): GET /v1/operator/local/artifacts/{sha256}
// serves a coordinator's own copy, POST .../{sha256}/copy asks a
// coordinator to take one from the holders it names, and PUT
// /v1/operator/artifacts/{sha256}/holders/{id} asks the leader to record
// that a coordinator holds a copy, or no longer does.

// Why a holder is added or dropped (SetArtifactHolder.Reason).
const (
	holderMissing = "missing" // the file is gone
	holderDamaged = "damaged" // wrong size, or no longer hashes to its name
	holderFetched = "fetched" // the node fetched its copy back and verified it
	holderCopied  = "copied"  // the leader had the node take a copy
)

// repairActor is the audit actor of the holder changes repairs make.
const repairActor = "repair"

const (
	// checkHashBudget bounds the bytes one check of a coordinator's own
	// copies hashes; the rest are hashed in later checks (their size is
	// checked every time).
	checkHashBudget = 1 << 30
	// reverifyEvery is how often every copy is hashed again.
	reverifyEvery = 24 * time.Hour
	// maxCopySources bounds the holders a copy request names.
	maxCopySources = 16
)

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
	from, err := s.obtainCopy(r.Context(), d, req.Size, req.Sources)
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
	case holderMissing, holderDamaged:
		if req.Held {
			return invalidf("reason %s drops a holder: held must be false", req.Reason)
		}
	case holderFetched:
		if !req.Held {
			return invalidf("reason %s adds a holder: held must be true", req.Reason)
		}
	default:
		return invalidf("reason: %s is not one of %s, %s, %s", shortQuote(req.Reason), holderMissing, holderDamaged, holderFetched)
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
	out, err := state.Propose[state.ArtifactOutcome](r.Context(), s.propose, command.SetArtifactHolder{
		Digest: d, NodeID: id, Held: req.Held, Size: req.Size, Reason: req.Reason, By: repairActor, Now: s.now(),
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, api.ArtifactResponse{Artifact: view.Artifact(out.Artifact)})
	return nil
}

// errNoRecord: the leader has no record of the digest (collected).
var errNoRecord = errors.New("the artifact has no record")

// reportHolding has the leader record that this coordinator holds d
// (held: it verified size bytes here) or does not: proposed here when
// this coordinator leads, else asked of the leader on its peer route.
func (s *Server) reportHolding(ctx context.Context, d string, size int64, held bool, reason string) error {
	self := s.cluster.ID()
	if s.cluster.IsLeader() {
		_, err := state.Propose[state.ArtifactOutcome](ctx, s.propose, command.SetArtifactHolder{
			Digest: d, NodeID: self, Held: held, Size: size, Reason: reason, By: repairActor, Now: s.now(),
		})
		if errors.Is(err, state.ErrNotFound) {
			return errNoRecord
		}
		return err
	}
	addr := s.leaderHTTP()
	if addr == "" {
		return errors.New("no leader known")
	}
	base, err := s.peerURL(addr)
	if err != nil {
		return fmt.Errorf("the leader's address: %w", err)
	}
	body, err := json.Marshal(holderRequest{Held: held, Size: size, Reason: reason})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, base.JoinPath("/v1/operator/artifacts/", d, "holders", self).String(), bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(api.ProtocolHeader, api.ProtocolVersion)
	resp, err := s.forwardTransport.RoundTrip(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
		return nil
	case http.StatusNotFound:
		var e api.ErrorBody
		_ = json.NewDecoder(io.LimitReader(resp.Body, api.MaxJSONBody)).Decode(&e)
		if e.Error != nil && strings.HasPrefix(e.Error.Message, "no artifact ") {
			return errNoRecord
		}
		return fmt.Errorf("the leader answered HTTP 404: %s", errorMessage(e))
	default:
		var e api.ErrorBody
		_ = json.NewDecoder(io.LimitReader(resp.Body, api.MaxJSONBody)).Decode(&e)
		return fmt.Errorf("the leader answered HTTP %d: %s", resp.StatusCode, errorMessage(e))
	}
}

func errorMessage(e api.ErrorBody) string {
	if e.Error == nil {
		return "(no error body)"
	}
	return string(e.Error.Code) + ": " + e.Error.Message
}

// obtainCopy makes sure this coordinator's disk holds an intact copy of
// d, of size bytes: one it has is verified (a damaged one is replaced),
// else one is fetched from the first of sources that serves it, and kept
// only if it hashes to d (blob.Put). It returns the source the bytes came
// from ("" when they were here already).
func (s *Server) obtainCopy(ctx context.Context, d string, size int64, sources []string) (string, error) {
	if n, err := s.blobs.Verify(d); err == nil && n == size {
		return "", nil
	}
	var failed []string
	for _, node := range sources {
		if node == s.cluster.ID() || slices.Contains(failed, node) {
			continue
		}
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		addr := s.store.NodeHTTPAddr(node)
		if addr == "" {
			failed = append(failed, node+" (no address recorded)")
			continue
		}
		if err := s.fetchBlob(ctx, addr, d, size); err != nil {
			s.log.Warn("fetching a copy of an artifact from a holder failed", "sha256", d, "holder", node, "error", redactCredentials(err.Error()))
			failed = append(failed, node)
			continue
		}
		return node, nil
	}
	if len(failed) == 0 {
		return "", errors.New("no other coordinator holds it")
	}
	return "", fmt.Errorf("no holder served it (tried %s)", strings.Join(failed, ", "))
}

// fetchBlob stores here the copy of d the coordinator at addr serves from
// its disk, over mutual TLS, no credential sent.
func (s *Server) fetchBlob(ctx context.Context, addr, d string, size int64) error {
	base, err := s.peerURL(addr)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, artifactTransfer)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base.JoinPath("/v1/operator/local/artifacts/", d).String(), nil)
	if err != nil {
		return err
	}
	req.Header.Set(api.ProtocolHeader, api.ProtocolVersion)
	resp, err := s.forwardTransport.RoundTrip(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("answered HTTP %d", resp.StatusCode)
	}
	// More bytes than the record says fail the read, and store nothing;
	// bytes that do not hash to d are not kept either.
	n, err := s.blobs.Put(d, &cappedReader{r: resp.Body, left: size})
	if err != nil {
		return err
	}
	if n != size {
		return fmt.Errorf("served %d bytes, the record says %d", n, size)
	}
	return nil
}

// CheckOutcome counts what one check of a coordinator's own copies found
// and did.
type CheckOutcome struct {
	Held    int // records that list this coordinator
	Hashed  int // copies read through and hashed
	Missing int // copies not on disk
	Damaged int // copies of the wrong size or that no longer hash to their name
	Dropped int // holder entries dropped from their record
	Fetched int // copies fetched back from another holder
	Failed  int // copies that could be neither fetched nor dropped (tried again next time)
}

// Changed reports whether the check found anything wrong.
func (o CheckOutcome) Changed() bool { return o.Missing+o.Damaged > 0 }

// ArtifactChecker checks the copies the replicated state says this
// coordinator holds. It remembers which it has hashed, so that each copy
// is read through once per reverifyEvery (and once after a start), and
// only its size is checked in between. Not safe for concurrent use: one
// loop owns it.
type ArtifactChecker struct {
	s *Server
	// verified maps a digest to its file's modification time when it
	// was found intact.
	verified map[string]time.Time
	// since is when verified was last emptied: a file written after it
	// was written by blob.Put, which keeps only bytes that hash to their
	// name, and is not hashed again until the next period.
	since time.Time
}

// NewArtifactChecker returns a checker of this coordinator's copies.
func (s *Server) NewArtifactChecker() *ArtifactChecker {
	return &ArtifactChecker{s: s, verified: map[string]time.Time{}, since: time.Now()}
}

// Check checks every copy the state says this coordinator holds: each
// that is missing or damaged is dropped from its record, fetched again
// from another holder and, verified, recorded again.
func (c *ArtifactChecker) Check(ctx context.Context) CheckOutcome {
	s := c.s
	var out CheckOutcome
	if s.blobs == nil {
		return out
	}
	if time.Since(c.since) > reverifyEvery {
		c.verified = map[string]time.Time{}
		c.since = time.Now()
	}
	held := s.store.ArtifactsHeldBy(s.cluster.ID())
	out.Held = len(held)
	budget := int64(checkHashBudget)
	seen := make(map[string]bool, len(held))
	for _, a := range held {
		if ctx.Err() != nil {
			return out
		}
		seen[a.Digest] = true
		if problem := c.inspect(a, &budget, &out); problem != "" {
			c.repair(ctx, a, problem, &out)
		}
	}
	for d := range c.verified {
		if !seen[d] {
			delete(c.verified, d)
		}
	}
	return out
}

// inspect reports what is wrong with this coordinator's copy of a:
// holderMissing, holderDamaged, or "" when nothing is, or nothing can be
// told now (the disk did not answer; hashing left for a later check).
func (c *ArtifactChecker) inspect(a state.Artifact, budget *int64, out *CheckOutcome) string {
	s := c.s
	size, mod, err := s.blobs.Stat(a.Digest)
	switch {
	case errors.Is(err, blob.ErrNotFound):
		return holderMissing
	case err != nil:
		s.log.Warn("this coordinator cannot look at its copy of an artifact", "sha256", a.Digest, "error", err)
		return ""
	case size != a.Size:
		return holderDamaged
	}
	if v, ok := c.verified[a.Digest]; ok && v.Equal(mod) {
		return ""
	}
	if mod.After(c.since) {
		c.verified[a.Digest] = mod
		return ""
	}
	if *budget <= 0 {
		return ""
	}
	*budget -= size
	out.Hashed++
	_, err = s.blobs.Verify(a.Digest)
	switch {
	case errors.Is(err, blob.ErrDigestMismatch):
		return holderDamaged
	case errors.Is(err, blob.ErrNotFound):
		return holderMissing
	case err != nil:
		s.log.Warn("this coordinator cannot read its copy of an artifact", "sha256", a.Digest, "error", err)
		return ""
	}
	c.verified[a.Digest] = mod
	return ""
}

// repair handles a copy found missing or damaged: the record stops
// naming this coordinator, a damaged file is removed (never served again;
// reads relay from another holder), the bytes are fetched from
// another holder and, verified on this disk, this coordinator is
// recorded again. When the record cannot be changed now (no leader), the
// fetch still runs: a node listed for bytes it has again keeps no lie.
func (c *ArtifactChecker) repair(ctx context.Context, a state.Artifact, problem string, out *CheckOutcome) {
	s := c.s
	self := s.cluster.ID()
	if problem == holderMissing {
		out.Missing++
	} else {
		out.Damaged++
	}
	delete(c.verified, a.Digest)
	s.log.Warn("this coordinator's copy of an artifact is "+problem+"; repairing it", "sha256", a.Digest, "bytes", a.Size, "holders", strings.Join(a.Holders, ","))
	dropErr := s.reportHolding(ctx, a.Digest, a.Size, false, problem)
	if problem == holderDamaged {
		if err := s.blobs.Remove(a.Digest); err != nil {
			s.log.Warn("removing a damaged artifact copy", "sha256", a.Digest, "error", err)
		}
	}
	switch {
	case errors.Is(dropErr, errNoRecord):
		return // collected meanwhile: nothing to hold
	case dropErr != nil:
		s.log.Warn("could not have this coordinator dropped from an artifact's holders; will retry", "sha256", a.Digest, "error", redactCredentials(dropErr.Error()))
	default:
		out.Dropped++
	}
	var sources []string
	for _, h := range a.Holders {
		if h != self {
			sources = append(sources, h)
		}
	}
	from, err := s.obtainCopy(ctx, a.Digest, a.Size, sources)
	if err != nil {
		if dropErr != nil {
			out.Failed++
		}
		s.log.Warn("could not fetch an artifact copy back", "sha256", a.Digest, "error", err, "dropped", dropErr == nil)
		return
	}
	out.Fetched++
	if _, mod, err := s.blobs.Stat(a.Digest); err == nil {
		c.verified[a.Digest] = mod
	}
	if dropErr != nil {
		return // still listed, and holds the bytes again
	}
	if err := s.reportHolding(ctx, a.Digest, a.Size, true, holderFetched); err != nil && !errors.Is(err, errNoRecord) {
		// The leader's rounds record it when the artifact is short of
		// copies (a copy request finds the bytes here).
		s.log.Warn("could not have this coordinator recorded again as an artifact's holder", "sha256", a.Digest, "error", redactCredentials(err.Error()))
		return
	}
	s.log.Info("artifact copy repaired", "sha256", a.Digest, "from", from)
}

// ReplicationOutcome counts what one leader round of ReplicateArtifacts
// found and did.
type ReplicationOutcome struct {
	Short  int  // artifacts planned this round: fewer live holders than they need
	Copied int  // copies made and recorded
	Failed int  // artifacts no coordinator could take a copy of this round
	Lost   int  // artifacts no live holder is left for
	More   bool // the round's bounds left short artifacts for the next
}

// replication is one artifact a round brings back to enough copies.
type replication struct {
	Digest  string
	Size    int64
	Copies  int      // how many more holders it needs
	Sources []string // its live holders
	Targets []string // coordinators without a copy to ask, in order
}

// planReplication picks, among records (in digest order), the artifacts
// that have fewer live holders (holders among members) than min(2,
// len(members)), starting after the digest after and wrapping around, at
// most limit of them and, after the first, maxBytes in all. Targets are
// the members that hold no copy and can be reached, this coordinator
// (self) first. An artifact without a live holder cannot be copied: it
// is counted in lost. more reports whether the bounds left some out.
func planReplication(records []state.Artifact, self string, members []string, reachable func(string) bool, after string, limit int, maxBytes int64) (plan []replication, lost int, more bool) {
	need := min(2, len(members))
	start, _ := slices.BinarySearchFunc(records, after, func(a state.Artifact, d string) int { return strings.Compare(a.Digest, d) })
	if start < len(records) && records[start].Digest == after {
		start++
	}
	var bytes int64
	for i := range records {
		a := records[(start+i)%len(records)]
		var live []string
		for _, h := range a.Holders {
			if slices.Contains(members, h) {
				live = append(live, h)
			}
		}
		if len(live) >= need {
			continue
		}
		if len(live) == 0 {
			lost++
			continue
		}
		var targets []string
		if slices.Contains(members, self) && !slices.Contains(a.Holders, self) {
			targets = append(targets, self)
		}
		for _, m := range members {
			if m != self && !slices.Contains(a.Holders, m) && reachable(m) {
				targets = append(targets, m)
			}
		}
		if len(targets) == 0 {
			continue
		}
		if len(plan) == limit || (len(plan) > 0 && bytes+a.Size > maxBytes) {
			more = true
			continue
		}
		bytes += a.Size
		plan = append(plan, replication{Digest: a.Digest, Size: a.Size, Copies: need - len(live), Sources: live, Targets: targets})
	}
	return plan, lost, more
}

// Bounds of one leader round.
const (
	replicateLimit    = 16
	replicateMaxBytes = 4 << 30
)

// ReplicateArtifacts runs one leader round: it has the artifacts short of
// live holders copied to other coordinators, starting after the digest
// after, within the round's bounds, and returns where the next round
// starts. Each new holder is recorded only once it answered that it
// verified the bytes on its disk.
func (s *Server) ReplicateArtifacts(ctx context.Context, after string) (ReplicationOutcome, string, error) {
	var out ReplicationOutcome
	if !s.cluster.IsLeader() || s.blobs == nil {
		return out, after, nil
	}
	others, err := s.otherCoordinators()
	if err != nil {
		return out, after, err
	}
	self := s.cluster.ID()
	members := append(slices.Clone(others), self)
	slices.Sort(members)
	reachable := func(id string) bool { return id == self || s.store.NodeHTTPAddr(id) != "" }
	plan, lost, more := planReplication(s.store.ArtifactRecords(), self, members, reachable, after, replicateLimit, replicateMaxBytes)
	out.Short, out.Lost, out.More = len(plan), lost, more
	next := ""
	for _, p := range plan {
		if ctx.Err() != nil || !s.cluster.IsLeader() {
			out.More = true
			return out, next, ctx.Err()
		}
		next = p.Digest
		copied, gone := 0, false
		for _, target := range p.Targets {
			if copied == p.Copies || gone {
				break
			}
			if err := s.copyTo(ctx, target, p); err != nil {
				s.log.Warn("a coordinator could not take a copy of an artifact short of copies", "sha256", p.Digest, "coordinator", target, "error", redactCredentials(err.Error()))
				continue
			}
			_, err := state.Propose[state.ArtifactOutcome](ctx, s.propose, command.SetArtifactHolder{
				Digest: p.Digest, NodeID: target, Held: true, Size: p.Size, Reason: holderCopied, By: repairActor, Now: s.now(),
			})
			switch {
			case errors.Is(err, state.ErrNotFound):
				gone = true // collected meanwhile; the copy is swept
			case err != nil:
				s.log.Warn("recording an artifact's new holder", "sha256", p.Digest, "coordinator", target, "error", err)
			default:
				copied++
				out.Copied++
				s.log.Info("artifact copied to another coordinator", "sha256", p.Digest, "bytes", p.Size, "coordinator", target, "from", strings.Join(p.Sources, ","))
			}
		}
		if copied < p.Copies && !gone {
			out.Failed++
		}
	}
	if !out.More {
		next = ""
	}
	return out, next, nil
}

// copyTo has target hold a verified copy of p's artifact: this
// coordinator fetches it itself, another is asked on its peer route and
// must answer that it holds these very bytes.
func (s *Server) copyTo(ctx context.Context, target string, p replication) error {
	if target == s.cluster.ID() {
		_, err := s.obtainCopy(ctx, p.Digest, p.Size, p.Sources)
		return err
	}
	addr := s.store.NodeHTTPAddr(target)
	if addr == "" {
		return errors.New("no address recorded")
	}
	base, err := s.peerURL(addr)
	if err != nil {
		return err
	}
	body, err := json.Marshal(artifactCopyRequest{Size: p.Size, Sources: p.Sources})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, artifactTransfer)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base.JoinPath("/v1/operator/local/artifacts/", p.Digest, "copy").String(), bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(api.ProtocolHeader, api.ProtocolVersion)
	req.Header.Set(AppliedIndexHeader, strconv.FormatUint(s.cluster.AppliedIndex(), 10))
	resp, err := s.forwardTransport.RoundTrip(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusCreated {
		var e api.ErrorBody
		_ = json.NewDecoder(io.LimitReader(resp.Body, api.MaxJSONBody)).Decode(&e)
		return fmt.Errorf("answered HTTP %d: %s", resp.StatusCode, errorMessage(e))
	}
	var got api.ArtifactResponse
	if err := json.NewDecoder(io.LimitReader(resp.Body, api.MaxJSONBody)).Decode(&got); err != nil {
		return fmt.Errorf("unreadable answer: %w", err)
	}
	if got.Artifact.SHA256 != p.Digest || got.Artifact.Size != p.Size {
		return fmt.Errorf("answered that it holds %s (%d bytes), not %s (%d bytes)", shortQuote(got.Artifact.SHA256), got.Artifact.Size, p.Digest, p.Size)
	}
	return nil
}
