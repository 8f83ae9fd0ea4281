package state

import (
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/jobhistory"
)

// A job's events, in time order: its submission and the dependency it
// waits for, then, once cancelled, each task's cancellation with the
// reason; an unknown job is not found.
func TestJobEventsListSubmissionWaitsAndCancellation(t *testing.T) {
	s := New()
	mustApply(t, s, submit("up", 1, 0))
	j := submit("down", 2, 0)
	j.Spec.DependsOn = []command.Dependency{{Job: "up", Condition: command.DependSucceeded}}
	j.Now = at(2)
	mustApply(t, s, j, command.CancelJob{JobID: "down", By: "admin", Now: at(9)})
	evs, truncated, err := s.JobEvents("down")
	if err != nil || truncated {
		t.Fatal(err, truncated)
	}
	want := []struct {
		kind jobhistory.JobEventKind
		sec  int
		task string
	}{{jobhistory.JobSubmitted, 2, ""}, {jobhistory.JobWaitsForDependencies, 2, ""}, {jobhistory.TaskCancelled, 9, "down-a"}, {jobhistory.TaskCancelled, 9, "down-b"}}
	if len(evs) != len(want) {
		t.Fatalf("events %+v", evs)
	}
	for i, w := range want {
		e := evs[i]
		if e.Kind != w.kind || !e.At.Equal(at(w.sec)) || e.TaskID != w.task {
			t.Fatalf("event %d: %+v, want %+v", i, e, w)
		}
	}
	if evs[0].By != "admin" || evs[0].Team != command.DefaultTeam || len(evs[1].DependsOn) != 1 || evs[1].DependsOn[0].Job != "up" || evs[2].Reason == "" {
		t.Fatalf("event details %+v", evs)
	}
	if _, _, err := s.JobEvents("nope"); err == nil {
		t.Fatal("events of an unknown job")
	}
}
