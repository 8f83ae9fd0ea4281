package state

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
)

func digest(n int) string { return fmt.Sprintf("%064x", n) }

// checkpointed is a store where team ml's job c (checkpoint path ckpt)
// runs c-a on w1 under attempt a1, with two checkpoint artifacts
// recorded.
func checkpointed(t *testing.T) *Store {
	t.Helper()
	s := New()
	job := inTeam(submit("c", 1, 1), "ml")
	job.Spec.Checkpoint = &command.CheckpointSpec{Path: "ckpt"}
	job.Spec.MaxAttempts = 3
	mustApply(t, s, register("w1", "GPU-1"),
		command.CreateTeam{Name: "ml", Settings: teamSettings(100, 0), By: "admin", Now: at(0)},
		job,
		command.RecordArtifact{Digest: digest(1), Size: 10, NodeID: "n1", Holders: []string{"n1"}, By: "w1", Now: at(1)},
		command.RecordArtifact{Digest: digest(2), Size: 20, NodeID: "n1", Holders: []string{"n1"}, By: "w1", Now: at(1)},
		command.AssignTask{TaskID: "c-a", WorkerID: "w1", AttemptID: "a1", Devices: []string{"GPU-1"}, Now: at(2)},
		command.StartTask{TaskID: "c-a", WorkerID: "w1", AttemptID: "a1", Now: at(2)})
	return s
}

// A checkpoint reported with an attempt's end becomes the task's
// latest, belongs to the job's team, and replaces the one before, which
// garbage collection may then remove.
func TestCheckpointKeptLatestOnly(t *testing.T) {
	s := checkpointed(t)
	mustApply(t, s, command.FailTask{TaskID: "c-a", WorkerID: "w1", AttemptID: "a1", Reason: "exit 3", Now: at(3),
		Checkpoint: &command.Checkpoint{SHA256: digest(1), Size: 10, Format: command.CheckpointFile}})
	got := task(t, s, "c-a")
	if got.State != taskPending || got.Checkpoint == nil || got.Checkpoint.SHA256 != digest(1) || got.Checkpoint.AttemptID != "a1" {
		t.Fatalf("after the first end: %s %+v", got.State, got.Checkpoint)
	}
	if !s.artifacts.ReadableBy(digest(1), "ml") {
		t.Fatal("the checkpoint is not the team's")
	}
	mustApply(t, s,
		command.AssignTask{TaskID: "c-a", WorkerID: "w1", AttemptID: "a2", Devices: []string{"GPU-1"}, Now: at(4)},
		command.FailTask{TaskID: "c-a", WorkerID: "w1", AttemptID: "a2", Reason: "XID 79", GPUFault: "GPU-1", Now: at(5),
			Checkpoint: &command.Checkpoint{SHA256: digest(2), Size: 20, Format: command.CheckpointTar}})
	got = task(t, s, "c-a")
	if got.Checkpoint == nil || got.Checkpoint.SHA256 != digest(2) || got.Checkpoint.Format != command.CheckpointTar || got.Checkpoint.AttemptID != "a2" {
		t.Fatalf("after the second end: %+v", got.Checkpoint)
	}
	mustApply(t, s, command.CollectGarbage{Now: at(100), OlderThan: time.Second, By: "leader", Artifacts: true})
	if s.artifacts.Has(digest(1)) {
		t.Fatal("the replaced checkpoint was kept")
	}
	if !s.artifacts.Has(digest(2)) {
		t.Fatal("the latest checkpoint was collected")
	}
}

// A checkpoint the job does not ask for, in an unknown format, or not
// uploaded (or not at that size) is refused, and the end with it.
func TestCheckpointRefusesBadReports(t *testing.T) {
	cases := []struct {
		name  string
		cp    command.Checkpoint
		noJob bool
	}{
		{"not uploaded", command.Checkpoint{SHA256: digest(9), Size: 10, Format: command.CheckpointFile}, false},
		{"wrong size", command.Checkpoint{SHA256: digest(1), Size: 11, Format: command.CheckpointFile}, false},
		{"unknown format", command.Checkpoint{SHA256: digest(1), Size: 10, Format: "zip"}, false},
		{"job without a checkpoint path", command.Checkpoint{SHA256: digest(1), Size: 10, Format: command.CheckpointFile}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := checkpointed(t)
			if c.noJob {
				s.ownJob(s.jobs.Get("c")).Spec.Checkpoint = nil
			}
			before := snapshotBytes(t, s)
			cp := c.cp
			for _, end := range []command.Command{
				command.FinishTask{TaskID: "c-a", WorkerID: "w1", AttemptID: "a1", ExitCode: 1, Now: at(3), Checkpoint: &cp},
				command.FailTask{TaskID: "c-a", WorkerID: "w1", AttemptID: "a1", Reason: "exit 1", Now: at(3), Checkpoint: &cp},
			} {
				if r := apply(t, s, end); !errors.Is(r.Err(), ErrInvalid) {
					t.Fatalf("%T: %v, want invalid", end, r.Err())
				}
			}
			if string(snapshotBytes(t, s)) != string(before) {
				t.Fatal("a refused end changed the state")
			}
		})
	}
}
