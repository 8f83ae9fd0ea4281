package state

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/audit"
)

// Draining a GPU cordons it and stops what runs on it: a running task is
// named to its agent (preempted), and once the agent reports it stopped
// its attempt ends preempted, uses up no attempt (max attempts 1), and the
// task is placed on another GPU; an assigned task is requeued at once. A
// task on another GPU runs on. The drain is audited.
func TestDrainGPURequeuesItsTasksWithoutUsingAnAttempt(t *testing.T) {
	s := New()
	j := submit("j", 3, 1)
	j.Spec.MaxAttempts = 1
	mustApply(t, s, register("w1", "GPU-1", "GPU-2", "GPU-3", "GPU-4", "GPU-5"), j)
	held := map[string]string{} // task -> GPU
	for i, id := range []string{"a1", "a2", "a3"} {
		cand, ok, err := s.Match("w1", "", nil)
		if err != nil || !ok {
			t.Fatalf("match %d: %v %v", i, ok, err)
		}
		mustApply(t, s, command.AssignTask{TaskID: cand.TaskID, WorkerID: "w1", AttemptID: id, Devices: cand.Devices, Now: at(2)})
		if i < 2 {
			mustApply(t, s, command.StartTask{TaskID: cand.TaskID, WorkerID: "w1", AttemptID: id, Now: at(3)})
		}
		held[cand.TaskID] = cand.Devices[0]
	}
	gpuOf := func(task string) string { return held[task] }
	// j-a and j-b run, j-c is assigned; drain j-a's GPU, then j-c's.
	mustApply(t, s, command.CordonDevice{WorkerID: "w1", UUID: gpuOf("j-a"), Cordon: true, Drain: true, Reason: "reset", By: "admin", Now: at(4)})
	active := s.ActiveTasks("w1")
	for _, a := range active {
		if want := a.TaskID == "j-a"; a.Preempted != want {
			t.Fatalf("after the drain, %s preempted %v, want %v", a.TaskID, a.Preempted, want)
		}
	}
	if tk := task(t, s, "j-a"); tk.State != taskRunning {
		t.Fatalf("the running task on the drained GPU is %s before its agent stopped it", tk.State)
	}
	// The agent stops it and says so, as for any cancelled task.
	mustApply(t, s, command.FailTask{TaskID: "j-a", WorkerID: "w1", AttemptID: "a1", Reason: "stopped", Now: at(5)})
	tk := task(t, s, "j-a")
	a := tk.Attempts[len(tk.Attempts)-1]
	if tk.State != taskPending || tk.AttemptsUsed() != 0 || a.State != attemptPreempted || !strings.Contains(a.Reason, "drained by an admin: reset") {
		t.Fatalf("task after its drained attempt ended: %s, %d attempts used, last %+v", tk.State, tk.AttemptsUsed(), a)
	}
	mustApply(t, s, command.CordonDevice{WorkerID: "w1", UUID: gpuOf("j-c"), Cordon: true, Drain: true, By: "admin", Now: at(6)})
	if tc := task(t, s, "j-c"); tc.State != taskPending || tc.AttemptsUsed() != 0 {
		t.Fatalf("the assigned task on a drained GPU: %s with %d attempts used, want pending with none", tc.State, tc.AttemptsUsed())
	}
	if tb := task(t, s, "j-b"); tb.State != taskRunning || tb.Preempt != "" {
		t.Fatalf("a task on another GPU was touched: %s %q", tb.State, tb.Preempt)
	}
	// The retries go to GPUs neither drained nor held.
	for range 2 {
		cand, ok, err := s.Match("w1", "", nil)
		if err != nil || !ok {
			t.Fatalf("the requeued tasks were not placed: %v %v", ok, err)
		}
		if d := cand.Devices[0]; d == gpuOf("j-a") || d == gpuOf("j-c") || d == gpuOf("j-b") {
			t.Fatalf("%s was placed on %s, drained or held", cand.TaskID, d)
		}
		mustApply(t, s, command.AssignTask{TaskID: cand.TaskID, WorkerID: "w1", AttemptID: "r-" + cand.TaskID, Devices: cand.Devices, Now: at(7)})
		held["retry-"+cand.TaskID] = cand.Devices[0]
	}
	var kinds []string
	for _, ev := range s.Audit(audit.Filter{Kinds: []string{"gpu.drained", "gpu.cordoned"}}) {
		kinds = append(kinds, ev.Kind+" "+ev.Subject+" "+ev.Detail)
	}
	want := []string{
		"gpu.drained " + gpuOf("j-a") + " reset; 1 running tasks told to stop, 0 assigned tasks requeued",
		"gpu.drained " + gpuOf("j-c") + " 0 running tasks told to stop, 1 assigned tasks requeued",
	}
	if !slices.Equal(kinds, want) {
		t.Fatalf("audit %q, want %q", kinds, want)
	}
	rec, _ := s.Worker("w1")
	if _, ok := rec.Worker.Cordons[gpuOf("j-a")]; !ok {
		t.Fatal("a drained GPU is not cordoned")
	}
}

// A drain of a GPU the worker lacks, of an unknown worker, or a drain
// that does not cordon is refused and changes nothing.
func TestDrainGPURefusals(t *testing.T) {
	s := New()
	mustApply(t, s, register("w1", "GPU-1"), submit("j", 1, 1))
	cand, _, _ := s.Match("w1", "", nil)
	mustApply(t, s, command.AssignTask{TaskID: cand.TaskID, WorkerID: "w1", AttemptID: "a1", Devices: cand.Devices, Now: at(2)})
	for name, c := range map[string]struct {
		cmd  command.CordonDevice
		want error
	}{
		"unknown worker":       {command.CordonDevice{WorkerID: "nobody", UUID: "GPU-1", Cordon: true, Drain: true, Now: at(3)}, ErrNotFound},
		"unknown GPU":          {command.CordonDevice{WorkerID: "w1", UUID: "GPU-9", Cordon: true, Drain: true, Now: at(3)}, ErrNotFound},
		"a drain that uncords": {command.CordonDevice{WorkerID: "w1", UUID: "GPU-1", Drain: true, Now: at(3)}, ErrInvalid},
	} {
		before := s.Audit(audit.Filter{})
		if err := apply(t, s, c.cmd).Err(); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", name, err, c.want)
		}
		if after := s.Audit(audit.Filter{}); len(after) != len(before) {
			t.Errorf("%s: a refusal was audited", name)
		}
		if tk := task(t, s, cand.TaskID); tk.State != taskAssigned || tk.Preempt != "" {
			t.Errorf("%s: the task became %s (%q)", name, tk.State, tk.Preempt)
		}
	}
	if rec, _ := s.Worker("w1"); len(rec.Worker.Cordons) != 0 {
		t.Fatalf("a refused drain cordoned: %v", rec.Worker.Cordons)
	}
}
