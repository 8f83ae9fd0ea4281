package state

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/gpulayer/gpulayer/coordinator/command"
)

// Approved inventory. A worker's GPUs are offered as the worker registered
// them, or as an admin last approved them (ApproveDevices): a GPU whose
// UUID is new since then, or whose memory or identity (gpubind.go)
// changed, is kept and shown but
// given no work until an admin approves the inventory again. A GPU swapped
// in, or one that reports another size than it did, is not taken on the
// agent's word alone.
//
// Worker.ApprovedDevices maps each approved GPU's UUID to its memory in
// MiB. A worker from state written before it was kept has none (nil): its
// inventory is approved as it stands at its next report, so that nothing
// it had is withdrawn.

// approvedDevice reports whether d is as w's approved inventory has it.
func approvedDevice(w *Worker, d command.Device) bool {
	if w.ApprovedDevices == nil {
		return true
	}
	mib, ok := w.ApprovedDevices[d.UUID]
	return ok && mib == d.MemoryMiB && sameIdentity(w, d) // gpubind.go
}

// offered reports whether d may be given work: healthy, approved, not
// cordoned (cordon.go) and not awaiting a MIG layout (miglayout.go).
func offered(w *Worker, d command.Device) bool {
	return d.Healthy && approvedDevice(w, d) && !cordoned(w, d) && !migHeld(w, d)
}

// approveLegacy approves, for a worker from state written before
// approvals (or GPU identities) were kept, its GPUs as they stand: what its
// next report would do (updateWorker), done at restore, so that every
// replica that restores such state holds the same records, and nil never
// stands in the store for "approved as they stand" beside an empty
// inventory that means "none approved".
func approveLegacy(w *Worker) {
	if w.ApprovedDevices == nil {
		w.ApprovedDevices = inventoryOf(w.Devices)
	}
	bindLegacyIdentity(w) // gpubind.go
}

// inventoryOf is the approved form of a device list.
func inventoryOf(devs []command.Device) map[string]uint64 {
	m := make(map[string]uint64, len(devs))
	for _, d := range devs {
		m[d.UUID] = d.MemoryMiB
	}
	return m
}

// Unapproved describes, for each of w's devices that awaits approval, why:
// new since the inventory was approved, or its memory changed.
func unapproved(w *Worker) map[string]string {
	out := map[string]string{}
	for _, d := range w.Devices {
		if approvedDevice(w, d) {
			continue
		}
		if mib, ok := w.ApprovedDevices[d.UUID]; ok && mib != d.MemoryMiB {
			out[d.UUID] = fmt.Sprintf("its memory changed from %d to %d MiB since the worker's inventory was approved", mib, d.MemoryMiB)
		} else if ok {
			out[d.UUID] = "its model, compute capability, PCI id, MIG layout, sharing or topology changed since the worker's inventory was approved"
		} else {
			out[d.UUID] = "it is new since the worker's inventory was approved"
		}
	}
	return out
}

// ApproveOutcome is the outcome of ApproveDevices: the worker, and the
// GPUs the approval brought into service.
type ApproveOutcome struct {
	Worker   WorkerRecord
	Approved []string
}

// approveDevices makes a worker's current inventory its approved one.
func (s *Store) approveDevices(c command.ApproveDevices) (ApproveOutcome, error) {
	w, ok := s.workers[c.WorkerID]
	if !ok {
		return ApproveOutcome{}, fmt.Errorf("worker %s: %w", c.WorkerID, ErrNotFound)
	}
	if w.Status == workerRevoked {
		return ApproveOutcome{}, fmt.Errorf("worker %s is revoked: %w", w.ID, ErrConflict)
	}
	waiting := slices.Sorted(maps.Keys(unapproved(w)))
	w.ApprovedDevices = inventoryOf(w.Devices)
	w.ApprovedIdentity = identitiesOf(w.Devices)
	detail := "no GPU was awaiting approval"
	if len(waiting) > 0 {
		detail = "brought into service: " + strings.Join(waiting, ", ")
		s.markPending()
	}
	s.audit.Record(command.AuditEvent{Time: c.Now, Kind: "worker.gpus_approved", Actor: c.By, WorkerID: w.ID, Subject: w.ID, Source: c.Source, Detail: detail})
	return ApproveOutcome{Worker: s.workerRecord(w), Approved: waiting}, nil
}
