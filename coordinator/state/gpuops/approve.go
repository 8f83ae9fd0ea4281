package gpuops

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/sched/fit"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
)

// Approved inventory. A worker's GPUs are offered as the worker registered
// them, or as an admin last approved them (Approve): a GPU whose UUID is
// new since then, or whose memory or identity (fit.Identity) changed, is
// kept and shown but given no work until an admin approves the inventory
// again. A GPU swapped in, or one that reports another size than it did,
// is not taken on the agent's word alone.
//
// Worker.ApprovedDevices maps each approved GPU's UUID to its memory in
// MiB. A worker from state written before it was kept has none (nil): its
// inventory is approved as it stands at its next report, so that nothing
// it had is withdrawn.

// ApproveLegacy approves, for a worker from state written before
// approvals (or GPU identities) were kept, its GPUs as they stand: what
// its next report would do, done at restore too, so that every replica
// that restores such state holds the same records, and nil never stands
// for "approved as they stand" beside an empty inventory that means "none
// approved".
func ApproveLegacy(w *record.Worker) {
	if w.ApprovedDevices == nil {
		w.ApprovedDevices = fit.Inventory(w.Devices)
	}
	fit.BindLegacyIdentity(w)
}

// Unapproved describes, for each of w's devices that awaits approval, why:
// new since the inventory was approved, or its memory or identity changed.
func Unapproved(w *record.Worker) map[string]string {
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

// Approve makes w's current inventory its approved one, and returns the
// GPUs that were waiting for it, sorted. Audited.
func Approve(fx Effects, w *record.Worker, c command.ApproveDevices) []string {
	waiting := slices.Sorted(maps.Keys(Unapproved(w)))
	w.ApprovedDevices = fit.Inventory(w.Devices)
	w.ApprovedIdentity = fit.Identities(w.Devices)
	detail := "no GPU was awaiting approval"
	if len(waiting) > 0 {
		detail = "brought into service: " + strings.Join(waiting, ", ")
		fx.MarkPending()
	}
	fx.Audit(command.AuditEvent{Time: c.Now, Kind: "worker.gpus_approved", Actor: c.By, WorkerID: w.ID, Subject: w.ID, Source: c.Source, Detail: detail})
	return waiting
}
