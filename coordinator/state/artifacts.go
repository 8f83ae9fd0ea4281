package state

import (
	"fmt"
	"slices"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
)

// Artifact is the replicated record of a content-addressed blob. The bytes
// live in the data dirs of the coordinators listed in Holders, never in
// Raft.
type Artifact struct {
	Digest     string    `json:"digest"`
	Size       int64     `json:"size"`
	UploadedBy string    `json:"uploaded_by,omitempty"`
	UploadedAt time.Time `json:"uploaded_at"`
	Holders    []string  `json:"holders"`
}

// ArtifactOutcome is the outcome of RecordArtifact: the record, and
// whether this command created it (else it added a holder).
type ArtifactOutcome struct {
	Created  bool
	Artifact Artifact
}

func (s *Store) recordArtifact(c command.RecordArtifact) (ArtifactOutcome, error) {
	a, ok := s.artifacts[c.Digest]
	if ok && a.Size != c.Size {
		return ArtifactOutcome{}, fmt.Errorf("artifact %s was recorded with %d bytes, not %d: %w", c.Digest, a.Size, c.Size, ErrConflict)
	}
	if !ok {
		a = &Artifact{Digest: c.Digest, Size: c.Size, UploadedBy: c.By, UploadedAt: c.Now}
		s.artifacts[c.Digest] = a
	}
	if i, held := slices.BinarySearch(a.Holders, c.NodeID); !held {
		a.Holders = slices.Insert(a.Holders, i, c.NodeID)
	}
	s.record(command.AuditEvent{Time: c.Now, Kind: "artifact.stored", Actor: c.By, Subject: c.Digest, Source: c.Source, Detail: fmt.Sprintf("%d bytes on %s", c.Size, c.NodeID)})
	return ArtifactOutcome{Created: !ok, Artifact: a.clone()}, nil
}

// Artifact returns the record of a digest.
func (s *Store) Artifact(digest string) (Artifact, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	a, ok := s.artifacts[digest]
	if !ok {
		return Artifact{}, false
	}
	return a.clone(), true
}

// WorkerHoldsInput reports whether worker holds (assigned or running) a
// task whose job lists digest among its inputs: the only artifacts a
// worker may read.
func (s *Store) WorkerHoldsInput(workerID, digest string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	w, ok := s.workers[workerID]
	if !ok || w.Status == workerRevoked {
		return false
	}
	for id := range w.active {
		if slices.Contains(s.jobs[s.tasks[id].JobID].Spec.Inputs, digest) {
			return true
		}
	}
	return false
}
