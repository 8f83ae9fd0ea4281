package state

import (
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// An assignment proposed under the request id the worker's last one was
// made under, while that attempt is still the worker's, is answered with
// that assignment and assigns nothing; once the attempt has ended, or
// under another id, or for another worker, a new one is made. The record
// survives a snapshot.
func TestAcquireUnderOneRequestIDAssignsOnce(t *testing.T) {
	s := New()
	for _, c := range []command.Command{register("w1", "GPU-1", "GPU-2"), register("w2", "GPU-3"), submit("j1", 4, 1)} {
		apply(t, s, c)
	}
	assign := func(task, worker, attempt, dev, req string) AssignOutcome {
		t.Helper()
		res := apply(t, s, command.AssignTask{TaskID: task, WorkerID: worker, AttemptID: attempt, Devices: []string{dev}, Now: at(2), RequestID: req})
		if res.Err() != nil {
			t.Fatalf("assign %s to %s: %v", task, worker, res.Err())
		}
		out, err := OutcomeOf[AssignOutcome](res)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	first := assign("j1-a", "w1", "a1", "GPU-1", "r1")
	if first.Replayed || first.Task.AttemptID != "a1" {
		t.Fatalf("first assignment: %+v", first)
	}
	again := assign("j1-b", "w1", "a2", "GPU-2", "r1")
	if !again.Replayed || again.Task.AttemptID != "a1" || again.Task.ID != "j1-a" || again.Task.Devices[0] != "GPU-1" {
		t.Fatalf("the same request id again: %+v", again)
	}
	if task, _ := s.Task("j1-b"); task.State != api.TaskPending {
		t.Fatalf("the replay assigned j1-b: %s", task.State)
	}
	if out, ok := s.AcquireReplay("w1", "r1"); !ok || len(out) != 1 || out[0].Task.AttemptID != "a1" {
		t.Fatalf("AcquireReplay: %+v %v", out, ok)
	}
	if _, ok := s.AcquireReplay("w2", "r1"); ok {
		t.Fatal("another worker's request id replayed w1's assignment")
	}
	if out := assign("j1-c", "w2", "a3", "GPU-3", "r1"); out.Replayed || out.Task.AttemptID != "a3" {
		t.Fatalf("w2 under the same id: %+v", out)
	}

	r, _ := roundTrip(t, s)
	if out, ok := r.AcquireReplay("w1", "r1"); !ok || len(out) != 1 || out[0].Task.AttemptID != "a1" {
		t.Fatalf("AcquireReplay after a restore: %+v %v", out, ok)
	}

	apply(t, s, command.FinishTask{TaskID: "j1-a", WorkerID: "w1", AttemptID: "a1", ExitCode: 0, Now: at(3)})
	if _, ok := s.AcquireReplay("w1", "r1"); ok {
		t.Fatal("an ended attempt was replayed")
	}
	if out := assign("j1-b", "w1", "a4", "GPU-2", "r1"); out.Replayed || out.Task.AttemptID != "a4" {
		t.Fatalf("after the attempt ended, the id again: %+v", out)
	}
	if out := assign("j1-d", "w1", "a5", "GPU-1", "r2"); out.Replayed {
		t.Fatalf("a new request id replayed: %+v", out)
	}
}

// An acquire for several tasks under one request id is remembered whole:
// a retry under that id gets every assignment still the worker's, and
// assigns nothing more.
func TestAcquireForSeveralIsReplayedWhole(t *testing.T) {
	s := New()
	mustApply(t, s, register("w1"), submit("j", 3, 0),
		command.AssignTask{TaskID: "j-a", WorkerID: "w1", AttemptID: "a1", Now: at(2), RequestID: "r"},
		command.AssignTask{TaskID: "j-b", WorkerID: "w1", AttemptID: "a2", Now: at(2), RequestID: "r", More: true})
	out, ok := s.AcquireReplay("w1", "r")
	if !ok || len(out) != 2 || out[0].Task.ID != "j-a" || out[1].Task.ID != "j-b" {
		t.Fatalf("replay: %+v %v", out, ok)
	}
	again := apply(t, s, command.AssignTask{TaskID: "j-c", WorkerID: "w1", AttemptID: "a3", Now: at(3), RequestID: "r"})
	if task, _ := s.Task("j-c"); again.Err() != nil || task.State != api.TaskPending {
		t.Fatalf("a retry under the id assigned j-c: %s %v", task.State, again.Err())
	}
	mustApply(t, s, command.FinishTask{TaskID: "j-a", WorkerID: "w1", AttemptID: "a1", ExitCode: 0, Now: at(4)})
	if out, ok := s.AcquireReplay("w1", "r"); !ok || len(out) != 1 || out[0].Task.ID != "j-b" {
		t.Fatalf("replay after one ended: %+v %v", out, ok)
	}
}
