package state

import (
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/command"
)

func intp(n int) *int { return &n }

// An approved GPU re-reported with anything placement trusts changed
// (its model, compute capability, PCI id, MIG mode or profile, sharing,
// NUMA node or links) awaits approval again, as one whose memory changed
// does: approval bound its UUID and memory alone, so an approved GPU
// could be re-reported as another model (finding 5 of the third review).
func TestApprovalBindsWhatPlacementTrusts(t *testing.T) {
	// whole: the changed GPU is still one a whole-GPU task may have, once
	// approved (a MIG one is given out only as its MIG devices).
	cases := []struct {
		name   string
		change func(d *command.Device)
		whole  bool
	}{
		{"model", func(d *command.Device) { d.Name = "NVIDIA B200" }, true},
		{"compute capability", func(d *command.Device) { d.ComputeCapability = "10.0" }, true},
		{"PCI id", func(d *command.Device) { d.PCIDevice = "10de:2330" }, true},
		{"MIG mode", func(d *command.Device) { d.MIGEnabled = true }, false},
		{"MIG profile", func(d *command.Device) { d.MIGProfile = "7g.80gb" }, false},
		{"MIG parent", func(d *command.Device) { d.Parent = "GPU-9" }, false},
		{"sharing", func(d *command.Device) { d.Sharing = "mps" }, true},
		{"NUMA node", func(d *command.Device) { d.NUMANode = intp(1) }, true},
		{"links", func(d *command.Device) { d.Links = []command.DeviceLink{{Peer: "GPU-9", Path: "nvlink", NvLinks: 18}} }, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := New()
			mustApply(t, s, register("w1", "GPU-1"), submit("j", 1, 1))
			changed := gpus("GPU-1")
			c.change(&changed[0])
			mustApply(t, s, update("w1", changed...))
			rec, _ := s.Worker("w1")
			if why := rec.Unapproved["GPU-1"]; !strings.Contains(why, "changed since the worker's inventory was approved") {
				t.Fatalf("unapproved: %v", rec.Unapproved)
			}
			if _, ok, _ := s.Match("w1", "", nil); ok {
				t.Fatal("a GPU re-reported as another device was placed on")
			}
			// Still so after a snapshot.
			restored, _ := roundTrip(t, s)
			if _, ok, _ := restored.Match("w1", "", nil); ok {
				t.Fatal("after a restore, the re-reported GPU was placed on")
			}
			mustApply(t, s, command.ApproveDevices{WorkerID: "w1", By: "admin", Now: at(4)})
			if rec, _ := s.Worker("w1"); len(rec.Unapproved) != 0 {
				t.Fatalf("unapproved after the approval: %v", rec.Unapproved)
			}
			if _, ok, _ := s.Match("w1", "", nil); c.whole && !ok {
				t.Fatal("not placed on once approved again")
			}
		})
	}
}

// What changes while a GPU runs (health, driver and CUDA versions, its
// index) is not bound: a driver upgrade needs no approval.
func TestApprovalLeavesRuntimeFieldsFree(t *testing.T) {
	s := New()
	mustApply(t, s, register("w1", "GPU-1"), submit("j", 1, 1))
	changed := gpus("GPU-1")
	changed[0].DriverVersion, changed[0].CUDAVersion, changed[0].Index, changed[0].Health = "580.1", "13.0", 3, "healthy"
	mustApply(t, s, update("w1", changed...))
	if rec, _ := s.Worker("w1"); len(rec.Unapproved) != 0 {
		t.Fatalf("unapproved: %v", rec.Unapproved)
	}
	if _, ok, _ := s.Match("w1", "", nil); !ok {
		t.Fatal("not placed on after a driver upgrade")
	}
}

// A worker approved before the identity was bound (memory alone) has its
// GPUs' identity bound as they stood before the next report, so that
// report cannot change a model unseen.
func TestLegacyApprovalBindsIdentityAsItStood(t *testing.T) {
	s := New()
	mustApply(t, s, register("w1", "GPU-1"))
	s.workers["w1"].ApprovedIdentity = nil
	changed := gpus("GPU-1")
	changed[0].Name = "NVIDIA B200"
	mustApply(t, s, update("w1", changed...))
	if rec, _ := s.Worker("w1"); rec.Unapproved["GPU-1"] == "" {
		t.Fatalf("unapproved: %v", rec.Unapproved)
	}
}
