package state

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/artifacts"
)

// The artifact commands: the room (package artifacts) keeps the records
// and their rules; the state says which workers hold which tasks, which
// digests its jobs name, and audits.

// ArtifactReadableBy reports whether a team's clients may read a recorded
// artifact (false for one not recorded).
func (s *Store) ArtifactReadableBy(digest, team string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.artifacts.ReadableBy(digest, team)
}

func (s *Store) recordArtifact(c command.RecordArtifact) (artifacts.Outcome, error) {
	out, nodes, err := s.artifacts.Record(c)
	if err != nil {
		return out, err
	}
	s.audit.Record(command.AuditEvent{Time: c.Now, Kind: "artifact.stored", Actor: c.By, Subject: c.Digest, Source: c.Source, Detail: fmt.Sprintf("%d bytes on %s", c.Size, strings.Join(nodes, ","))})
	return out, nil
}

// setArtifactHolder adds a coordinator to, or drops it from, the holders
// of a recorded artifact (artifacts.Table.SetHolder); a change is
// audited, no change records no event.
func (s *Store) setArtifactHolder(c command.SetArtifactHolder) (artifacts.Outcome, error) {
	out, kind, changed, err := s.artifacts.SetHolder(c)
	if err != nil || !changed {
		return out, err
	}
	detail := c.NodeID
	if c.Reason != "" {
		detail += ": " + c.Reason
	}
	s.audit.Record(command.AuditEvent{Time: c.Now, Kind: kind, Actor: c.By, Subject: c.Digest, Detail: detail})
	return out, nil
}

// ArtifactRecords returns every artifact record, in digest order.
func (s *Store) ArtifactRecords() []artifacts.Artifact {
	return s.artifactsWhere(func(*artifacts.Artifact) bool { return true })
}

// ArtifactsHeldBy returns the records that list node among their
// holders, in digest order.
func (s *Store) ArtifactsHeldBy(node string) []artifacts.Artifact {
	return s.artifactsWhere(func(a *artifacts.Artifact) bool { return slices.Contains(a.Holders, node) })
}

// ArtifactsHeldCount is how many records list node among their holders.
func (s *Store) ArtifactsHeldCount(node string) int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.artifacts.HeldCount(node)
}

func (s *Store) artifactsWhere(keep func(*artifacts.Artifact) bool) []artifacts.Artifact {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.artifacts.Where(keep)
}

// Artifact returns the record of a digest.
func (s *Store) Artifact(digest string) (artifacts.Artifact, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.artifacts.Get(digest)
}

// WorkerHoldsInput reports whether worker holds (assigned or running) a
// task whose job lists digest among its inputs, or whose latest
// checkpoint it is (checkpoint.go): the only artifacts a worker may read.
func (s *Store) WorkerHoldsInput(workerID, digest string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.workerHolds(workerID, func(spec *command.JobSpec) bool {
		return slices.ContainsFunc(spec.Inputs, func(r command.ArtifactRef) bool { return r.SHA256 == digest })
	}) || s.workerHoldsCheckpoint(workerID, digest)
}

// WorkerMayUpload reports whether worker holds (assigned or running) a
// task whose job declares outputs or a checkpoint: the only time a
// worker may upload.
func (s *Store) WorkerMayUpload(workerID string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.workerHolds(workerID, func(spec *command.JobSpec) bool { return len(spec.Outputs) > 0 || spec.Checkpoint != nil })
}

// workerHolds reports whether a live worker holds a task whose job's spec
// satisfies ok; mu must be held.
func (s *Store) workerHolds(workerID string, ok func(*command.JobSpec) bool) bool {
	w, found := s.workers[workerID]
	if !found || w.Status == workerRevoked {
		return false
	}
	for id := range w.Held() {
		if ok(&s.jobs.Get(s.tasks.Get(id).JobID).Spec) {
			return true
		}
	}
	return false
}

// checkProof refuses, for a finish or fail that asks for it, an artifact
// the worker names that the job's team may not read yet and the worker
// never uploaded the bytes of (artifacts.Table.Proves).
func (s *Store) checkProof(require bool, t *Task, workerID string, arts []command.TaskArtifact) error {
	if !require {
		return nil
	}
	return s.artifacts.Proves(arts, command.TeamOf(s.jobs.Get(t.JobID).Team), workerID)
}
