package state

import (
	"errors"
	"slices"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/sched/fit"
	"github.com/gpulayer/gpulayer/coordinator/state/audit"
)

// migReport is GPU-1 of w1 as its agent reports it after acting on
// request gen: split into profiles (whole when none), with err.
func migReport(gen uint64, err string, profiles ...string) command.UpdateWorker {
	devs := gpus("GPU-1", "GPU-2")
	devs[0].MIGEnabled, devs[0].MIGRequest, devs[0].MIGError = len(profiles) > 0, gen, err
	for i, p := range profiles {
		devs = append(devs, command.Device{Index: 0, UUID: "MIG-1-" + string(rune('a'+i)), Parent: "GPU-1", Name: "NVIDIA H100 80GB HBM3 MIG " + p, MIGProfile: p, MemoryMiB: 40192, Healthy: true})
	}
	return command.UpdateWorker{WorkerID: "w1", Executors: []string{"exec"}, Devices: devs, Now: at(9)}
}

// A layout asked of a GPU holds the GPU (nothing new is placed on it),
// the pending request is the agent's to act on, and the agent's report
// settles it: applied brings the new MIG devices into service, approved
// with it; a failure keeps the GPU held with the agent's reason until an
// admin clears the request. Every step is audited.
func TestMIGLayoutIsHeldUntilTheAgentReportsIt(t *testing.T) {
	s := New()
	mustApply(t, s, register("w1", "GPU-1", "GPU-2"), submit("j", 2, 1))
	mustApply(t, s, command.SetMIGLayout{WorkerID: "w1", UUID: "GPU-1", Layout: []string{"3g.40gb", "3g.40gb"}, By: "admin", Now: at(2)})
	rec, _ := s.Worker("w1")
	pending := rec.Worker.PendingMIGLayouts()
	if len(pending) != 1 || pending[0].UUID != "GPU-1" || pending[0].State != MIGPending || !slices.Equal(pending[0].Layout, []string{"3g.40gb", "3g.40gb"}) {
		t.Fatalf("pending %+v", pending)
	}
	gen := pending[0].Generation
	// Two tasks of one GPU each: only GPU-2 is offered.
	c, ok, _ := s.Match("w1", "", nil)
	if !ok || !slices.Equal(c.Devices, []string{"GPU-2"}) {
		t.Fatalf("match %+v %v, want GPU-2 alone", c, ok)
	}
	mustApply(t, s, command.AssignTask{TaskID: c.TaskID, WorkerID: "w1", AttemptID: "a-" + c.TaskID, Devices: c.Devices, Now: at(3)})
	if c, ok, _ := s.Match("w1", "", nil); ok {
		t.Fatalf("a task was placed on a GPU awaiting its MIG layout: %+v", c)
	}
	// A report of an older request, or none, settles nothing.
	mustApply(t, s, migReport(gen-1, ""))
	if rec, _ := s.Worker("w1"); len(rec.Worker.PendingMIGLayouts()) != 1 {
		t.Fatalf("a report of another request settled it: %+v", rec.Worker.MIGLayouts)
	}
	mustApply(t, s, migReport(gen, "", "3g.40gb", "3g.40gb"))
	rec, _ = s.Worker("w1")
	if len(rec.Worker.MIGLayouts) != 1 || rec.Worker.MIGLayouts[0].State != MIGApplied || len(rec.Worker.PendingMIGLayouts()) != 0 {
		t.Fatalf("after the report: %+v", rec.Worker.MIGLayouts)
	}
	if len(rec.Unapproved) != 0 {
		t.Fatalf("the repartitioned GPU awaits approval: %v", rec.Unapproved)
	}
	mig := submit("m", 1, 1)
	mig.Spec.Resources.MIGProfile = "3g.40gb"
	mustApply(t, s, mig)
	c, ok, _ = s.Match("w1", "", nil)
	if !ok || c.TaskID != "m-a" || len(c.Devices) != 1 || !slices.Contains([]string{"MIG-1-a", "MIG-1-b"}, c.Devices[0]) {
		t.Fatalf("after the layout applied: %+v %v", c, ok)
	}

	// A failure holds the GPU, with the agent's reason.
	mustApply(t, s, command.SetMIGLayout{WorkerID: "w1", UUID: "GPU-1", Layout: []string{"7g.80gb"}, By: "admin", Now: at(10)})
	rec, _ = s.Worker("w1")
	gen = rec.Worker.PendingMIGLayouts()[0].Generation
	mustApply(t, s, migReport(gen, "2 tasks still hold the GPU after the 10m0s drain bound", "3g.40gb", "3g.40gb"))
	rec, _ = s.Worker("w1")
	if m := rec.Worker.MIGLayouts[0]; m.State != MIGFailed || m.Reason != "2 tasks still hold the GPU after the 10m0s drain bound" {
		t.Fatalf("failed request %+v", m)
	}
	if !fit.MIGHeld(&rec.Worker, command.Device{UUID: "MIG-1-a", Parent: "GPU-1"}) {
		t.Fatal("a failed repartition's MIG devices are offered")
	}
	mustApply(t, s, command.SetMIGLayout{WorkerID: "w1", UUID: "GPU-1", Clear: true, By: "admin", Now: at(11)})
	rec, _ = s.Worker("w1")
	if len(rec.Worker.MIGLayouts) != 0 || fit.MIGHeld(&rec.Worker, command.Device{UUID: "MIG-1-a", Parent: "GPU-1"}) {
		t.Fatalf("after clearing: %+v", rec.Worker.MIGLayouts)
	}
	var kinds []string
	for _, ev := range s.Audit(audit.Filter{Kinds: []string{"gpu.mig_requested", "gpu.mig_applied", "gpu.mig_failed", "gpu.mig_cleared"}}) {
		kinds = append(kinds, ev.Kind)
	}
	if want := []string{"gpu.mig_requested", "gpu.mig_applied", "gpu.mig_requested", "gpu.mig_failed", "gpu.mig_cleared"}; !slices.Equal(kinds, want) {
		t.Fatalf("audit %q, want %q", kinds, want)
	}
}

// A report that says applied while the GPU shows another layout fails
// the request (that a repartition of a GPU that awaited approval does not
// approve it is gpuops's TestRepartitionApprovesOnlyAnApprovedGPU).
func TestMIGLayoutTrustsTheDevicesNotTheWord(t *testing.T) {
	s := New()
	mustApply(t, s, register("w1", "GPU-1", "GPU-2"))
	mustApply(t, s, command.SetMIGLayout{WorkerID: "w1", UUID: "GPU-1", Layout: []string{"3g.40gb", "3g.40gb"}, By: "admin", Now: at(2)})
	rec, _ := s.Worker("w1")
	gen := rec.Worker.PendingMIGLayouts()[0].Generation
	mustApply(t, s, migReport(gen, "", "3g.40gb"))
	rec, _ = s.Worker("w1")
	if m := rec.Worker.MIGLayouts[0]; m.State != MIGFailed || m.Reason != "the agent reported the layout applied, but the GPU shows 3g.40gb" {
		t.Fatalf("%+v", m)
	}
}

// Bad requests are refused and change nothing.
func TestMIGLayoutRefusals(t *testing.T) {
	s := New()
	mustApply(t, s, register("w1", "GPU-1"), migReport(0, "", "3g.40gb"))
	mustApply(t, s, command.RevokeWorker{WorkerID: "w1", By: "admin", Now: at(3)}, register("w2", "GPU-9"))
	for name, c := range map[string]struct {
		cmd  command.SetMIGLayout
		want error
	}{
		"unknown worker":   {command.SetMIGLayout{WorkerID: "nobody", UUID: "GPU-1", Layout: []string{"1g.10gb"}}, ErrNotFound},
		"unknown GPU":      {command.SetMIGLayout{WorkerID: "w2", UUID: "GPU-3", Layout: []string{"1g.10gb"}}, ErrNotFound},
		"revoked worker":   {command.SetMIGLayout{WorkerID: "w1", UUID: "GPU-1", Layout: []string{"1g.10gb"}}, ErrConflict},
		"empty profile":    {command.SetMIGLayout{WorkerID: "w2", UUID: "GPU-9", Layout: []string{""}}, ErrInvalid},
		"too many":         {command.SetMIGLayout{WorkerID: "w2", UUID: "GPU-9", Layout: slices.Repeat([]string{"1g.10gb"}, 8)}, ErrInvalid},
		"clear and layout": {command.SetMIGLayout{WorkerID: "w2", UUID: "GPU-9", Layout: []string{"1g.10gb"}, Clear: true}, ErrInvalid},
	} {
		before := s.Audit(audit.Filter{})
		if err := apply(t, s, c.cmd).Err(); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", name, err, c.want)
		}
		if after := s.Audit(audit.Filter{}); len(after) != len(before) {
			t.Errorf("%s: a refusal was audited", name)
		}
	}
	s2 := New()
	mustApply(t, s2, register("w1", "GPU-1"), migReport(0, "", "3g.40gb"))
	if err := apply(t, s2, command.SetMIGLayout{WorkerID: "w1", UUID: "MIG-1-a", Layout: []string{"1g.10gb"}}).Err(); !errors.Is(err, ErrInvalid) {
		t.Errorf("a MIG device's layout: %v, want invalid", err)
	}
	if rec, _ := s2.Worker("w1"); len(rec.Worker.MIGLayouts) != 0 {
		t.Errorf("refusals left %+v", rec.Worker.MIGLayouts)
	}
}
