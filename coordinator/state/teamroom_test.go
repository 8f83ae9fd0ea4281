package state

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/command"
)

// A team's tasks are placed while its use stays within quota + borrow
// limit (no limit: the whole fleet); a job that may not be preempted only
// within quota; what is left waits, saying which team's room it lacks.
func TestTeamRoomInPlacement(t *testing.T) {
	no := false
	cases := []struct {
		name       string
		settings   command.TeamSettings
		gpus       int
		preemptOff bool
		want       int
		reason     string
	}{
		{"within quota and borrow", borrowing(100, 200, limit(100)), 1, false, 3, "team vision at its quota: 3 of 2 GPUs in use, borrow limit 1, the task needs 1"},
		{"borrow without bound", borrowing(100, 100, nil), 1, false, 6, ""},
		{"no borrowing", borrowing(100, 200, limit(0)), 1, false, 2, "team vision at its quota: 2 of 2 GPUs in use, borrow limit 0"},
		{"two-GPU tasks stop before the ceiling", borrowing(100, 200, limit(100)), 2, false, 1, "2 of 2 GPUs in use, borrow limit 1, the task needs 2"},
		{"not preemptible: quota only", borrowing(100, 200, nil), 1, true, 2, "team vision at its quota for jobs that may not be preempted: 2 of 2 GPUs in use"},
		{"not preemptible without quota", borrowing(100, 0, nil), 1, true, 0, "0 of 0 GPUs in use, the task needs 1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := New()
			job := teamJob("j", "vision", 8, tc.gpus, 0)
			if tc.preemptOff {
				job.Spec.Preemptible = &no
			}
			addWorkers(t, s, 6, "w1")
			mustApply(t, s, command.CreateTeam{Name: "vision", Settings: tc.settings, Now: at(0)}, job)
			p := &placer{t: t, s: s, now: at(2)}
			got := p.fill("w1")
			if len(got) != tc.want {
				t.Fatalf("placed %d tasks, want %d", len(got), tc.want)
			}
			rec, _ := s.Job("j")
			if tc.reason == "" && strings.Contains(rec.PendingReason, "quota") || !strings.Contains(rec.PendingReason, tc.reason) {
				t.Fatalf("pending reason %q, want it to contain %q", rec.PendingReason, tc.reason)
			}
		})
	}
}

// Two acquires racing for a team's last room are two entries of one
// log: the state machine refuses the second (and the gang that would go
// past the ceiling), changing nothing.
func TestTeamRoomDecidedInApply(t *testing.T) {
	s := New()
	addWorkers(t, s, 2, "w1", "w2")
	mustApply(t, s, command.CreateTeam{Name: "vision", Settings: borrowing(100, 100, limit(0)), Now: at(0)},
		teamJob("j", "vision", 2, 1, 0), inTeam(gangJob("g", 2), "vision"))
	a, _ := command.Encode(command.AssignTask{TaskID: "j-a", WorkerID: "w1", AttemptID: "x1", Devices: []string{"w1-0"}, Now: at(2)})
	b, _ := command.Encode(command.AssignTask{TaskID: "j-b", WorkerID: "w2", AttemptID: "x2", Devices: []string{"w2-0"}, Now: at(2)})
	out := s.Apply(command.Batch{Entries: [][]byte{a, b}}).([]Result)
	if out[0].Err() != nil || !errors.Is(out[1].Err(), ErrTeamRoom) || !errors.Is(out[1].Err(), ErrConflict) {
		t.Fatalf("racing assignments: %v / %v, want the second refused for the team's room", out[0].Err(), out[1].Err())
	}
	if tk, _ := s.Task("j-b"); tk.State != taskPending {
		t.Fatalf("the refused task is %s", tk.State)
	}
	err := s.Apply(command.AssignGang{JobID: "g", WorkerID: "w1", Now: at(2), Members: []command.GangMember{
		{TaskID: "g-a", WorkerID: "w1", AttemptID: "ga", Devices: []string{"w1-1"}},
		{TaskID: "g-b", WorkerID: "w2", AttemptID: "gb", Devices: []string{"w2-1"}},
	}}).(Result).Err()
	if !errors.Is(err, ErrTeamRoom) || !slices.Equal(states(s, "g-a", "g-b"), []string{taskPending, taskPending}) {
		t.Fatalf("gang past the ceiling: %v, members %v", err, states(s, "g-a", "g-b"))
	}
	if got := s.inuse.inUse("vision"); got != 100 {
		t.Fatalf("vision holds %d hundredths, want 100", got)
	}
}

// What a team holds is given back as its tasks end, and rebuilt by a
// restore from what is active.
func TestTeamLoadFollowsTasks(t *testing.T) {
	s := New()
	addWorkers(t, s, 4, "w1")
	mustApply(t, s, command.CreateTeam{Name: "vision", Settings: borrowing(100, 0, nil), Now: at(0)}, teamJob("j", "vision", 3, 1, 0))
	p := &placer{t: t, s: s, now: at(2)}
	got := p.fill("w1")
	p.finish(got[0])
	if u := s.inuse.inUse("vision"); u != 200 {
		t.Fatalf("vision holds %d, want 200 after one of three ended", u)
	}
	r := New()
	var snap bytes.Buffer
	if err := s.Snapshot(&snap); err != nil {
		t.Fatal(err)
	}
	if err := r.Restore(&snap); err != nil {
		t.Fatal(err)
	}
	if u := r.inuse.inUse("vision"); u != 200 {
		t.Fatalf("restored vision holds %d, want 200", u)
	}
}
