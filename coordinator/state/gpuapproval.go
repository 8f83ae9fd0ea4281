package state

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/sched/fit"
)

// Approved inventory. A worker's GPUs are offered as the worker registered
// them, or as an admin last approved them (ApproveDevices): a GPU whose
// UUID is new since then, or whose memory or identity (fit.Identity)
// changed, is kept and shown but
// given no work until an admin approves the inventory again. A GPU swapped
// in, or one that reports another size than it did, is not taken on the
// agent's word alone.
//
// Worker.ApprovedDevices maps each approved GPU's UUID to its memory in
// MiB. A worker from state written before it was kept has none (nil): its
// inventory is approved as it stands at its next report, so that nothing
// it had is withdrawn.

// approveLegacy approves, for a worker from state written before
// approvals (or GPU identities) were kept, its GPUs as they stand: what its
// next report would do (updateWorker), done at restore, so that every
// replica that restores such state holds the same records, and nil never
// stands in the store for "approved as they stand" beside an empty
// inventory that means "none approved".
func approveLegacy(w *Worker) {
	if w.ApprovedDevices == nil {
		w.ApprovedDevices = fit.Inventory(w.Devices)
	}
	fit.BindLegacyIdentity(w)
}

// Unapproved describes, for each of w's devices that awaits approval, why:
// new since the inventory was approved, or its memory changed.
func unapproved(w *Worker) map[string]string {
	out := map[string]string{}
	for _, d := range w.Devices {
		if fit.Approved(w, d) {
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
	w.ApprovedDevices = fit.Inventory(w.Devices)
	w.ApprovedIdentity = fit.Identities(w.Devices)
	detail := "no GPU was awaiting approval"
	if len(waiting) > 0 {
		detail = "brought into service: " + strings.Join(waiting, ", ")
		s.markPending()
	}
	s.audit.Record(command.AuditEvent{Time: c.Now, Kind: "worker.gpus_approved", Actor: c.By, WorkerID: w.ID, Subject: w.ID, Source: c.Source, Detail: detail})
	return ApproveOutcome{Worker: s.workerRecord(w), Approved: waiting}, nil
}
