package state

import (
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/teams"
)

func teamBytes(t *testing.T, s *Store, team string) int64 {
	t.Helper()
	r, err := s.TeamByName(team)
	if err != nil {
		t.Fatal(err)
	}
	return r.Usage.ArtifactBytes
}

// A team's artifact quota counts what is charged to it: a client's upload
// to its team at once; a worker's upload to the team it was charged to,
// then to the job's team of the task whose checkpoint it is; and only a
// task's latest checkpoint: the one a newer replaces frees its bytes.
func TestTeamArtifactBytesCountLatestCheckpointOnly(t *testing.T) {
	s := checkpointed(t) // ml's task c-a runs on w1; digests 1 (10 B) and 2 (20 B) uploaded by w1, charged to none
	if got := teamBytes(t, s, "ml"); got != 0 {
		t.Fatalf("before any checkpoint: %d bytes charged to ml", got)
	}
	mustApply(t, s, command.RecordArtifact{Digest: digest(3), Size: 7, NodeID: "n1", Holders: []string{"n1"}, By: "alice", ChargeTeam: "ml", Now: at(1)})
	if got := teamBytes(t, s, "ml"); got != 7 {
		t.Fatalf("a client's upload: %d bytes charged to ml, want 7", got)
	}
	mustApply(t, s, command.FailTask{TaskID: "c-a", WorkerID: "w1", AttemptID: "a1", Reason: "exit 3", Now: at(3),
		Checkpoint: &command.Checkpoint{SHA256: digest(1), Size: 10, Format: command.CheckpointFile}})
	if got := teamBytes(t, s, "ml"); got != 17 {
		t.Fatalf("after the first checkpoint: %d bytes, want 17", got)
	}
	mustApply(t, s,
		command.AssignTask{TaskID: "c-a", WorkerID: "w1", AttemptID: "a2", Devices: []string{"GPU-1"}, Now: at(4)},
		command.FailTask{TaskID: "c-a", WorkerID: "w1", AttemptID: "a2", Reason: "exit 3", Now: at(5),
			Checkpoint: &command.Checkpoint{SHA256: digest(2), Size: 20, Format: command.CheckpointTar}})
	if got := teamBytes(t, s, "ml"); got != 27 {
		t.Fatalf("after the second checkpoint replaced the first: %d bytes, want 27 (7 + 20)", got)
	}
	if used, limit, limited := s.TeamArtifactRoom("ml"); limited || used != 0 || limit != 0 {
		t.Fatalf("ml has no artifact quota: room %d/%d %v", used, limit, limited)
	}
	q := int64(30)
	mustApply(t, s, command.UpdateTeam{Name: "ml", ArtifactQuotaBytes: &q, By: "admin", Now: at(6)})
	if used, limit, limited := s.TeamArtifactRoom("ml"); !limited || used != 27 || limit != 30 {
		t.Fatalf("room %d/%d %v, want 27/30 true", used, limit, limited)
	}
	mustApply(t, s, command.UpdateTeam{Name: "ml", ClearArtifactQuota: true, By: "admin", Now: at(7)})
	if _, _, limited := s.TeamArtifactRoom("ml"); limited {
		t.Fatal("the artifact quota was cleared but still holds")
	}
}

// A worker's output is charged to the job's team once its finish names
// it; one another credential uploaded stays where it was charged.
func TestTeamArtifactBytesFollowTheOutputsJob(t *testing.T) {
	s := New()
	mustApply(t, s, register("w1", "GPU-1"),
		command.CreateTeam{Name: "ml", Settings: teamSettings(100, 0), By: "admin", Now: at(0)},
		inTeam(submit("j", 1, 1), "ml"),
		command.RecordArtifact{Digest: digest(1), Size: 10, NodeID: "n1", Holders: []string{"n1"}, By: "w1", ChargeTeam: command.DefaultTeam, Now: at(1)},
		command.RecordArtifact{Digest: digest(2), Size: 5, NodeID: "n1", Holders: []string{"n1"}, By: "bob", ChargeTeam: command.DefaultTeam, Now: at(1)},
		command.AssignTask{TaskID: "j-a", WorkerID: "w1", AttemptID: "a1", Devices: []string{"GPU-1"}, Now: at(2)},
		command.FinishTask{TaskID: "j-a", WorkerID: "w1", AttemptID: "a1", Now: at(3), Artifacts: []command.TaskArtifact{
			{Path: "out/a", SHA256: digest(1), Size: 10}, {Path: "out/b", SHA256: digest(2), Size: 5}}})
	if got, want := teamBytes(t, s, "ml"), int64(10); got != want {
		t.Errorf("ml: %d bytes, want %d", got, want)
	}
	if got, want := teamBytes(t, s, command.DefaultTeam), int64(5); got != want {
		t.Errorf("default: %d bytes, want %d", got, want)
	}
}

// Settings out of bounds are refused and change nothing.
func TestTeamArtifactQuotaBounds(t *testing.T) {
	s := New()
	mustApply(t, s, command.CreateTeam{Name: "ml", Settings: teamSettings(100, 0), By: "admin", Now: at(0)})
	for _, c := range []command.Command{
		command.UpdateTeam{Name: "ml", ArtifactQuotaBytes: ptr(int64(-1)), By: "admin", Now: at(1)},
		command.UpdateTeam{Name: "ml", ArtifactQuotaBytes: ptr(int64(teams.MaxArtifactBytes + 1)), By: "admin", Now: at(1)},
		command.UpdateTeam{Name: "ml", ArtifactQuotaBytes: ptr(int64(5)), ClearArtifactQuota: true, By: "admin", Now: at(1)},
	} {
		if r := apply(t, s, c); r.Err() == nil {
			t.Errorf("%+v accepted", c)
		}
	}
	if _, _, limited := s.TeamArtifactRoom("ml"); limited {
		t.Error("a refused update set an artifact quota")
	}
}

func ptr[T any](v T) *T { return &v }
