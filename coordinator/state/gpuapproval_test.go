package state

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/audit"
)

func update(id string, devs ...command.Device) command.UpdateWorker {
	return command.UpdateWorker{WorkerID: id, Executors: []string{"exec"}, Devices: devs, Now: at(3), AuditDevices: true}
}

// A GPU new since the worker's inventory was approved, or whose memory
// changed, is kept and shown but given no work until an admin approves;
// the approval brings it into service and is audited.
func TestChangedInventoryAwaitsApproval(t *testing.T) {
	s := New()
	mustApply(t, s, register("w1", "GPU-1", "GPU-2"), submit("j", 1, 3))
	three := gpus("GPU-1", "GPU-2", "GPU-3")
	mustApply(t, s, update("w1", three...))
	if _, ok, _ := s.Match("w1", "", nil); ok {
		t.Fatal("a 3-GPU task matched with one GPU awaiting approval")
	}
	if j, _ := s.Job("j"); !strings.Contains(j.PendingReason, "healthy now is 2") {
		t.Fatalf("pending reason %q", j.PendingReason)
	}
	rec, _ := s.Worker("w1")
	if why := rec.Unapproved["GPU-3"]; !strings.Contains(why, "new since") || len(rec.Unapproved) != 1 {
		t.Fatalf("unapproved: %v", rec.Unapproved)
	}
	if r := apply(t, s, command.ApproveDevices{WorkerID: "nobody", By: "admin", Now: at(4)}); !errors.Is(r.Err(), ErrNotFound) {
		t.Fatalf("approving an unknown worker: %v", r.Err())
	}
	r := apply(t, s, command.ApproveDevices{WorkerID: "w1", By: "admin", Now: at(4)})
	out, err := OutcomeOf[ApproveOutcome](r)
	if err != nil || len(out.Approved) != 1 || out.Approved[0] != "GPU-3" || len(out.Worker.Unapproved) != 0 {
		t.Fatalf("approval: %+v %v", out, err)
	}
	if cand, ok, _ := s.Match("w1", "", nil); !ok || len(cand.Devices) != 3 {
		t.Fatalf("after the approval: %+v %v", cand, ok)
	}
	found := false
	for _, e := range s.Audit(audit.Filter{}) {
		found = found || (e.Kind == "worker.gpus_approved" && strings.Contains(e.Detail, "GPU-3"))
	}
	if !found {
		t.Fatal("no worker.gpus_approved audit event")
	}

	// Memory that changes is not taken on the agent's word either.
	smaller := gpus("GPU-1", "GPU-2", "GPU-3")
	smaller[0].MemoryMiB = 40960
	mustApply(t, s, update("w1", smaller...))
	rec, _ = s.Worker("w1")
	if why := rec.Unapproved["GPU-1"]; !strings.Contains(why, "memory changed from 81559 to 40960 MiB") {
		t.Fatalf("unapproved after a memory change: %v", rec.Unapproved)
	}
	if _, ok, _ := s.Match("w1", "", nil); ok {
		t.Fatal("matched with a GPU whose memory changed")
	}
	// A GPU that goes needs nothing: what is left stays approved.
	mustApply(t, s, update("w1", gpus("GPU-2", "GPU-3")...))
	if rec, _ := s.Worker("w1"); len(rec.Unapproved) != 0 {
		t.Fatalf("after a GPU went: %v", rec.Unapproved)
	}
}

// A worker from state written before approvals were kept loses nothing:
// its inventory is approved as it stood at its next report, and only what
// changes then awaits approval.
func TestLegacyWorkerInventoryIsApprovedAsItStands(t *testing.T) {
	s := New()
	mustApply(t, s, register("w1", "GPU-1"))
	s.workers["w1"].ApprovedDevices = nil
	mustApply(t, s, update("w1", gpus("GPU-1", "GPU-2")...))
	rec, _ := s.Worker("w1")
	if len(rec.Unapproved) != 1 || rec.Unapproved["GPU-2"] == "" {
		t.Fatalf("unapproved: %v, want GPU-2 alone", rec.Unapproved)
	}
	// The approved inventory survives a snapshot.
	restored, _ := roundTrip(t, s)
	if rec, _ := restored.Worker("w1"); len(rec.Unapproved) != 1 {
		t.Fatalf("after a restore: %v", rec.Unapproved)
	}
}

// A worker registered with no GPUs has an approved inventory that is
// empty, not missing (nil: state from before approvals were kept, its
// GPUs approved as they stand). The snapshot once omitted an empty
// inventory, so a replica restored from it held nil where the others held
// an empty map: a GPU the worker reported later, awaiting approval on
// the replicas that replayed the log, was given work on the restored one
// with no approval (the replay-equivalence test found it).
func TestEmptyApprovedInventorySurvivesASnapshot(t *testing.T) {
	s := New()
	mustApply(t, s, register("w1"), submit("j", 1, 1), update("w1", gpus("GPU-9")...))
	r, _ := roundTrip(t, s)
	if w := r.workers["w1"]; w.ApprovedDevices == nil || len(w.ApprovedDevices) != 0 {
		t.Fatalf("restored approved inventory %#v; want empty, not nil", w.ApprovedDevices)
	}
	for name, st := range map[string]*Store{"replayed": s, "restored": r} {
		if _, ok, _ := st.Match("w1", "", nil); ok {
			t.Fatalf("%s: a GPU the worker did not register with was given work without an approval", name)
		}
		if rec, _ := st.Worker("w1"); len(rec.Unapproved) != 1 {
			t.Fatalf("%s: unapproved %v", name, rec.Unapproved)
		}
	}
}

// A snapshot from before approvals were kept (no inventory: nil) restores
// with the worker's GPUs approved as they stand, as its next report would
// have approved them: the same records on every replica that restores it.
func TestLegacyWorkerInventoryApprovedOnRestore(t *testing.T) {
	s := New()
	mustApply(t, s, register("w1", "GPU-1"), submit("j", 1, 1))
	w := s.workers["w1"]
	w.ApprovedDevices, w.ApprovedIdentity = nil, nil // as state written before either was kept
	r := New()
	if err := r.Restore(bytes.NewReader(snapshotBytes(t, s))); err != nil {
		t.Fatal(err)
	}
	got := r.workers["w1"]
	if len(got.ApprovedDevices) != 1 || len(got.ApprovedIdentity) != 1 {
		t.Fatalf("restored inventory %v, identity %v; want GPU-1 approved in both", got.ApprovedDevices, got.ApprovedIdentity)
	}
	if _, ok, _ := r.Match("w1", "", nil); !ok {
		t.Fatal("a legacy worker's GPU lost its approval across the restore")
	}
}
