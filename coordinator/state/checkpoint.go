package state

import (
	"fmt"

	"github.com/gpulayer/gpulayer/coordinator/command"
)

// Checkpoints. A job with a checkpoint path has that path uploaded when
// an attempt ends preempted, failed, or lost to its GPU with its agent
// alive; the end's report names the artifact, and the task keeps it as
// its latest checkpoint, which the next attempt's assignment names for
// the agent to stage. Only the latest is kept: the one it replaces is
// no longer named by the task, and garbage collection removes it once
// nothing else names it (gc.go). The artifact belongs to the job's team
// (it may read it); like an output, it counts in the artifact quota of
// the credential that uploaded it first, and in its job's team's quota
// while it is the task's latest (teamartifacts.go).

// checkCheckpoint refuses a checkpoint reported for t that its job does
// not ask for, in a format not known, whose artifact was not recorded at
// that size, or (requireProof) that the worker did not upload and the
// job's team may not read.
func (s *Store) checkCheckpoint(t *Task, cp *command.Checkpoint, workerID string, requireProof bool) error {
	if cp == nil {
		return nil
	}
	if s.jobs.Get(t.JobID).Spec.Checkpoint == nil {
		return fmt.Errorf("%w: checkpoint: job %s has no checkpoint path", ErrInvalid, t.JobID)
	}
	if cp.Format != command.CheckpointFile && cp.Format != command.CheckpointTar {
		return fmt.Errorf("%w: checkpoint: format %q is neither %s nor %s", ErrInvalid, cp.Format, command.CheckpointFile, command.CheckpointTar)
	}
	ref := []command.TaskArtifact{{Path: "checkpoint", SHA256: cp.SHA256, Size: cp.Size}}
	if err := s.artifacts.CheckRecorded(ref); err != nil {
		return err
	}
	return s.checkProof(requireProof, t, workerID, ref)
}

// keepCheckpoint makes cp, uploaded by attemptID on workerID, t's latest
// checkpoint, readable by the job's team (checkCheckpoint passed).
func (s *Store) keepCheckpoint(t *Task, cp *command.Checkpoint, attemptID, workerID string) {
	if cp == nil {
		return
	}
	s.mustOwn(t)
	team := command.TeamOf(s.jobs.Get(t.JobID).Team)
	if old := t.Checkpoint; old != nil && old.SHA256 != cp.SHA256 {
		s.releaseCheckpoint(t.ID, old.SHA256, team) // teamartifacts.go
	}
	t.Checkpoint = &TaskCheckpoint{SHA256: cp.SHA256, Size: cp.Size, Format: cp.Format, AttemptID: attemptID}
	s.artifacts.Grant(cp.SHA256, team, workerID)
}

// workerHoldsCheckpoint reports whether a live worker holds a task whose
// latest checkpoint is digest (it stages it); mu must be held.
func (s *Store) workerHoldsCheckpoint(workerID, digest string) bool {
	w, ok := s.workers[workerID]
	if !ok || w.Status == workerRevoked {
		return false
	}
	for id := range w.Held() {
		if c := s.tasks.Get(id).Checkpoint; c != nil && c.SHA256 == digest {
			return true
		}
	}
	return false
}
