package jobhistory

import (
	"slices"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
)

func at(s int) time.Time { return time.Unix(1_700_000_000+int64(s), 0).UTC() }

func kinds(evs []JobEvent) []JobEventKind {
	out := make([]JobEventKind, len(evs))
	for i, e := range evs {
		out[i] = e.Kind
	}
	return out
}

// A job's facts come out in time order, each attempt's from the attempt
// itself, a checkpoint only for the attempt that saved the task's latest,
// a task that was never found skipped.
func TestOfDerivesTheHistory(t *testing.T) {
	j := &record.Job{ID: "j", CreatedAt: at(0), CreatedBy: "alice", Team: "ml",
		Spec: command.JobSpec{DependsOn: []command.Dependency{{Job: "up", Condition: "succeeded"}}}}
	first := record.Attempt{ID: "a1", WorkerID: "w1", Devices: []string{"GPU-1"}, AssignedAt: at(1), StartedAt: at(2), EndedAt: at(5),
		State: record.AttemptPreempted, PreemptedBy: &record.Preemptor{TaskID: "p", At: at(4)}}
	second := record.Attempt{ID: "a2", WorkerID: "w2", AssignedAt: at(6), StartedAt: at(7), EndedAt: at(9), State: record.TaskSucceeded,
		Preflight: &command.Preflight{}}
	ta := &record.Task{ID: "j-a", Index: 0, State: record.TaskSucceeded, Attempts: []record.Attempt{first, second},
		Checkpoint: &record.TaskCheckpoint{SHA256: "ab", AttemptID: "a2"}}
	tb := &record.Task{ID: "j-b", Index: 1, State: record.TaskCancelled, UpdatedAt: at(3), Reason: "by alice"}

	evs, truncated := Of(j, []*record.Task{ta, nil, tb})
	want := []JobEventKind{JobSubmitted, JobWaitsForDependencies, AttemptAssigned, AttemptStarted, TaskCancelled,
		AttemptPreemptionAsked, AttemptEnded, AttemptAssigned, AttemptPreflight, AttemptStarted, AttemptEnded, CheckpointSaved}
	if got := kinds(evs); truncated || !slices.Equal(got, want) {
		t.Fatalf("kinds %v (truncated %v), want %v", got, truncated, want)
	}
	if !slices.IsSortedFunc(evs, func(a, b JobEvent) int { return a.At.Compare(b.At) }) {
		t.Fatal("events out of time order")
	}
	if e := evs[0]; e.By != "alice" || e.Team != "ml" {
		t.Fatalf("submission %+v", e)
	}
	if e := evs[4]; e.TaskID != "j-b" || e.TaskIndex != 1 || e.Reason != "by alice" {
		t.Fatalf("cancellation %+v", e)
	}
	if e := evs[len(evs)-1]; e.Checkpoint == nil || e.Checkpoint.SHA256 != "ab" || e.Attempt.ID != "a2" {
		t.Fatalf("checkpoint %+v", e)
	}
	// An event holds a copy: changing it leaves the records alone.
	evs[2].Attempt.Devices[0] = "changed"
	evs[len(evs)-1].Checkpoint.SHA256 = "changed"
	if ta.Attempts[0].Devices[0] != "GPU-1" || ta.Checkpoint.SHA256 != "ab" {
		t.Fatal("an event shares the records it was derived from")
	}
}

// A history longer than the bound keeps its latest events.
func TestOfKeepsTheLatest(t *testing.T) {
	j := &record.Job{ID: "j", CreatedAt: at(0)}
	task := &record.Task{ID: "j-a"}
	for i := range MaxJobEvents {
		task.Attempts = append(task.Attempts, record.Attempt{ID: "a", AssignedAt: at(1 + i)})
	}
	evs, truncated := Of(j, []*record.Task{task})
	if !truncated || len(evs) != MaxJobEvents || evs[0].Kind != AttemptAssigned || !evs[len(evs)-1].At.Equal(at(MaxJobEvents)) {
		t.Fatalf("%d events, truncated %v, first %v, last at %v", len(evs), truncated, evs[0].Kind, evs[len(evs)-1].At)
	}
}
