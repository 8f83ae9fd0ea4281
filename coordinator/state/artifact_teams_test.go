package state

import (
	"fmt"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/command"
)

// Who may read an artifact: a record from before teams is default's,
// and stays default's when a team is granted it; a client's upload is its
// team's; a worker's upload is nobody's (but an admin's) until a finish of
// a job lists it, which gives it to the job's team.
func TestArtifactTeams(t *testing.T) {
	s := New()
	d := func(n int) string { return fmt.Sprintf("%064x", n) }
	job := inTeam(submit("j", 1, 0), "vision")
	job.Spec.Outputs = []string{"out"}
	mustApply(t, s, command.CreateTeam{Name: "vision", Settings: teamSettings(100, 0), Now: at(0)},
		command.CreateTeam{Name: "audio", Settings: teamSettings(100, 0), Now: at(0)},
		command.RecordArtifact{Digest: d(1), Size: 1, NodeID: "n1", By: "old", Now: at(1)},                                 // before teams
		command.RecordArtifact{Digest: d(2), Size: 1, NodeID: "n1", Team: "vision", Scoped: true, By: "alice", Now: at(1)}, // a client's
		command.RecordArtifact{Digest: d(3), Size: 1, NodeID: "n1", Scoped: true, By: "w1", Now: at(1)},                    // a worker's
		command.RecordArtifact{Digest: d(1), Size: 1, NodeID: "n1", Team: "audio", Scoped: true, Touch: true, By: "carol", Now: at(2)},
		register("w1"), job,
		command.AssignTask{TaskID: "j-a", WorkerID: "w1", AttemptID: "a1", Now: at(3)},
		command.FinishTask{TaskID: "j-a", WorkerID: "w1", AttemptID: "a1", Artifacts: []command.TaskArtifact{{Path: "out/x", SHA256: d(3), Size: 1}}, Now: at(4)},
	)
	cases := []struct {
		digest int
		team   string
		want   bool
	}{
		{1, command.DefaultTeam, true}, {1, "audio", true}, {1, "vision", false},
		{2, "vision", true}, {2, command.DefaultTeam, false},
		{3, "vision", true}, {3, "audio", false}, {3, command.DefaultTeam, false},
		{4, command.DefaultTeam, false},
	}
	for _, c := range cases {
		if got := s.ArtifactReadableBy(d(c.digest), c.team); got != c.want {
			t.Errorf("artifact %d read by %s: %v, want %v", c.digest, c.team, got, c.want)
		}
	}
	if bad := stateDiffs(s, restored(t, s), at(9)); len(bad) > 0 {
		t.Fatalf("restored: %v", bad)
	}
}
