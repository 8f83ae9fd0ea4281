package httpapi

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/auth"
	"github.com/gpulayer/gpulayer/coordinator/blob"
	"github.com/gpulayer/gpulayer/coordinator/cluster"
	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/fsm"
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/coordinator/state/output"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// Cluster administration: membership and backups. Admin only; served by
// the leader (followers forward).

func (s *Server) statusSelf(w http.ResponseWriter, r *http.Request, _ auth.Principal) error {
	if s.self == nil {
		return fmt.Errorf("status/self not wired")
	}
	writeJSON(w, http.StatusOK, s.self())
	return nil
}

// collect removes the finished jobs due now (admin): those past the
// retention threshold, or the one given, and those beyond the count kept.
func (s *Server) collect(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	var req api.GCRequest
	if _, err := decodeRequest(r, &req, true); err != nil {
		return err
	}
	olderThan := time.Duration(-1)
	if v := req.OlderThanSeconds; v != nil {
		if *v < 0 || *v > api.MaxGCAgeSeconds {
			return invalidf("older_than_seconds: %d is not within 0 … %d", *v, int64(api.MaxGCAgeSeconds))
		}
		olderThan = time.Duration(*v) * time.Second
	}
	if s.collectGarbage == nil {
		return fmt.Errorf("garbage collection not wired")
	}
	n, err := s.collectGarbage(r.Context(), p.Name, olderThan)
	if err != nil {
		return err
	}
	s.log.Info("finished jobs collected on request", "by", p.Name, "removed", n)
	writeJSON(w, http.StatusOK, api.GCResponse{Removed: n})
	return nil
}

func (s *Server) addPeer(w http.ResponseWriter, r *http.Request, _ auth.Principal) error {
	var req api.RaftPeerRequest
	if _, err := decodeRequest(r, &req, false); err != nil {
		return err
	}
	// An address Raft cannot dial, once a voter, counts toward the quorum
	// and never answers: it is refused here, the configuration untouched.
	if err := cluster.CheckPeer(req.NodeID, req.RaftAddr); err != nil {
		return invalidf("%v", err)
	}
	if err := s.operator.AddVoter(r.Context(), req.NodeID, req.RaftAddr); err != nil {
		return fmt.Errorf("add peer %s: %w", req.NodeID, err)
	}
	s.log.Info("raft peer added", "node_id", req.NodeID, "raft_addr", req.RaftAddr)
	return s.peers(w, r, auth.Principal{})
}

func (s *Server) removePeer(w http.ResponseWriter, r *http.Request, _ auth.Principal) error {
	id := r.PathValue("id")
	peers, err := s.cluster.Peers()
	if err != nil {
		return err
	}
	found := false
	for _, p := range peers {
		found = found || p.ID == id
	}
	if !found {
		return newError(api.CodeNotFound, "no raft peer %q", id)
	}
	if err := s.operator.RemoveServer(r.Context(), id); err != nil {
		return fmt.Errorf("remove peer %s: %w", id, err)
	}
	s.log.Info("raft peer removed", "node_id", id)
	return s.peers(w, r, auth.Principal{})
}

// saveSnapshot streams the whole replicated state, task output included,
// as of now (after a barrier, so every committed write is in it), in the
// form Raft's snapshots take (fsm/sections.go).
func (s *Server) saveSnapshot(w http.ResponseWriter, r *http.Request, _ auth.Principal) error {
	if err := s.operator.Barrier(r.Context()); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", `attachment; filename="gpulayer.snap"`)
	if err := fsm.Save(s.store, w); err != nil {
		s.log.Error("snapshot save failed mid-stream", "error", err)
	}
	return nil
}

// restoreSnapshot replaces the whole state on every server with the
// uploaded snapshot. The upload is decoded and checked once, aside
// (fsm.Prepare), before Raft takes it, so a damaged file is refused and
// changes nothing; Raft's restore then swaps in what was prepared
// (fsm.Offer) instead of decoding it again.
func (s *Server) restoreSnapshot(w http.ResponseWriter, r *http.Request, _ auth.Principal) error {
	// The upload is held on disk (a nameless file among the artifacts'
	// temporaries), not in memory: it is read twice, once to prepare it
	// and once by Raft, which stores it as its snapshot.
	start := time.Now()
	f, n, err := s.blobs.Spool(http.MaxBytesReader(w, r.Body, api.MaxArtifactBody))
	switch {
	case errors.Is(err, blob.ErrStorage):
		return fmt.Errorf("snapshot upload: %w", err)
	case err != nil:
		return newError(api.CodeBodyTooLarge, "snapshot upload: %v", err)
	}
	defer f.Close()
	// One restore at a time: a second upload waits for the first to be
	// swapped in (or refused) before it is even prepared.
	s.restoreMu.Lock()
	defer s.restoreMu.Unlock()
	spooled := time.Now()
	prepared, err := s.snapshots.Prepare(f, n)
	switch {
	case errors.Is(err, output.ErrStorage):
		return fmt.Errorf("restore: %w", err)
	case err != nil:
		return invalidf("snapshot refused: %v", err) // damaged (checksum), malformed, or contradicting itself (state invariants)
	}
	withdraw, err := s.snapshots.Offer(prepared)
	if err != nil {
		prepared.Discard()
		return newError(api.CodeConflict, "restore: %v", err)
	}
	defer withdraw()
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	prepDone := time.Now()
	if err := s.operator.Restore(r.Context(), bufio.NewReaderSize(f, 1<<20), n); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	// The restore replaced the nodes table with the snapshot's, which, from
	// another cluster, lacks this leader or names another address: record
	// this one's again, or followers know no leader to forward to (they
	// announce their own addresses once they find the leader's).
	if s.self != nil {
		self := s.self()
		if _, err := state.Propose[struct{}](r.Context(), s.propose, command.RegisterNode{NodeID: self.NodeID, HTTPAddr: self.HTTPAddr}); err != nil {
			s.log.Warn("recording this leader's address after the restore failed; followers forward to it once a leader takes office", "error", err)
		}
	}
	// How long each step took (the upload and the wait for an earlier
	// restore, the decode and checks, Raft's copy and the swap) tells an
	// operator where a slow restore went.
	s.log.Warn("state restored from an uploaded snapshot", "bytes", n,
		"received", spooled.Sub(start).Round(time.Millisecond), "prepared", prepDone.Sub(spooled).Round(time.Millisecond),
		"raft_restored", time.Since(prepDone).Round(time.Millisecond))
	writeJSON(w, http.StatusOK, api.RestoreResponse{Bytes: n, Restored: true})
	return nil
}

// localDigest answers for this node only (never forwarded): the index it
// has applied and a digest of its state, so operators and the cluster test
// can see that every server holds the same state.
func (s *Server) localDigest(w http.ResponseWriter, r *http.Request, _ auth.Principal) error {
	h := sha256.New()
	if err := s.store.Snapshot(h); err != nil {
		return err
	}
	st := s.store.Stats()
	tasks := 0
	for _, n := range st.TasksByState {
		tasks += n
	}
	writeJSON(w, http.StatusOK, api.DigestResponse{
		NodeID:       s.cluster.ID(),
		AppliedIndex: s.cluster.AppliedIndex(),
		Digest:       hex.EncodeToString(h.Sum(nil)),
		Jobs:         st.Jobs,
		Tasks:        tasks,
	})
	return nil
}
