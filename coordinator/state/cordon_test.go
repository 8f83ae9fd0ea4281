package state

import (
	"errors"
	"slices"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/sched/fit"
	"github.com/gpulayer/gpulayer/coordinator/state/audit"
)

// A cordoned GPU takes no new task, the task on it runs on, and its
// cordon outlives the agent's next report; lifting it offers the GPU
// again. Cordoning a GPU the worker lacks, or on a revoked worker, is
// refused and changes nothing; everything is audited.
func TestCordonKeepsNewWorkOffAGPU(t *testing.T) {
	s := New()
	mustApply(t, s, register("w1", "GPU-1", "GPU-2"), submit("j", 2, 1))
	cand, ok, err := s.Match("w1", "", nil)
	if err != nil || !ok {
		t.Fatalf("match: %v %v", ok, err)
	}
	running := cand.Devices
	mustApply(t, s, command.AssignTask{TaskID: cand.TaskID, WorkerID: "w1", AttemptID: "a1", Devices: running, Now: at(2)})
	other := "GPU-1"
	if running[0] == "GPU-1" {
		other = "GPU-2"
	}
	mustApply(t, s, command.CordonDevice{WorkerID: "w1", UUID: running[0], Cordon: true, Reason: "fan noise", By: "admin", Now: at(3)},
		command.CordonDevice{WorkerID: "w1", UUID: other, Cordon: true, By: "admin", Now: at(3)})
	if tk, _ := s.Task(cand.TaskID); tk.State != taskAssigned {
		t.Fatalf("the task on a cordoned GPU became %s", tk.State)
	}
	if c, ok, _ := s.Match("w1", "", nil); ok {
		t.Fatalf("a task was matched to cordoned GPUs: %+v", c)
	}
	// The agent's next report replaces the devices; the cordons stay.
	mustApply(t, s, command.UpdateWorker{WorkerID: "w1", Executors: []string{"exec"}, Devices: gpus("GPU-1", "GPU-2"), Now: at(4)})
	if c, ok, _ := s.Match("w1", "", nil); ok {
		t.Fatalf("a report lifted the cordon: %+v", c)
	}
	rec, _ := s.Worker("w1")
	if rec.Worker.Cordons[running[0]] != "fan noise" || len(rec.Worker.Cordons) != 2 {
		t.Fatalf("cordons %v", rec.Worker.Cordons)
	}
	mustApply(t, s, command.CordonDevice{WorkerID: "w1", UUID: other, By: "admin", Now: at(5)})
	c, ok, _ := s.Match("w1", "", nil)
	if !ok || !slices.Equal(c.Devices, []string{other}) {
		t.Fatalf("after the cordon was lifted: %+v %v, want %s", c, ok, other)
	}

	for name, bad := range map[string]command.CordonDevice{
		"unknown worker": {WorkerID: "nobody", UUID: "GPU-1", Cordon: true, Now: at(6)},
		"unknown GPU":    {WorkerID: "w1", UUID: "GPU-9", Cordon: true, Now: at(6)},
	} {
		before := s.Audit(audit.Filter{})
		if err := apply(t, s, bad).Err(); !errors.Is(err, ErrNotFound) {
			t.Errorf("%s: %v, want not found", name, err)
		}
		if after := s.Audit(audit.Filter{}); len(after) != len(before) {
			t.Errorf("%s: a refusal was audited as a change", name)
		}
	}
	mustApply(t, s, command.RevokeWorker{WorkerID: "w1", By: "admin", Now: at(7)})
	if err := apply(t, s, command.CordonDevice{WorkerID: "w1", UUID: "GPU-1", Cordon: true, Now: at(8)}).Err(); !errors.Is(err, ErrConflict) {
		t.Errorf("cordon on a revoked worker: %v, want conflict", err)
	}
	var kinds []string
	for _, ev := range s.Audit(audit.Filter{Kinds: []string{"gpu.cordoned", "gpu.uncordoned"}}) {
		kinds = append(kinds, ev.Kind+" "+ev.Subject+" "+ev.Detail)
	}
	if want := []string{"gpu.cordoned " + running[0] + " fan noise", "gpu.cordoned " + other + " ", "gpu.uncordoned " + other + " "}; !slices.Equal(kinds, want) {
		t.Fatalf("audit %q, want %q", kinds, want)
	}
}

// Cordoning a GPU in MIG mode cordons each of its MIG devices.
func TestCordonCoversAGPUsMIGDevices(t *testing.T) {
	w := &Worker{Cordons: map[string]string{"GPU-A": ""}}
	for _, tc := range []struct {
		d    command.Device
		want bool
	}{
		{command.Device{UUID: "GPU-A"}, true},
		{command.Device{UUID: "MIG-1", Parent: "GPU-A"}, true},
		{command.Device{UUID: "MIG-2", Parent: "GPU-B"}, false},
		{command.Device{UUID: "GPU-B"}, false},
	} {
		if got := fit.Cordoned(w, tc.d); got != tc.want {
			t.Errorf("fit.Cordoned(%s of %q) = %v", tc.d.UUID, tc.d.Parent, got)
		}
	}
}
