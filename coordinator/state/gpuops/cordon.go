package gpuops

import (
	"fmt"
	"maps"
	"slices"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
	"github.com/gpulayer/gpulayer/coordinator/state/stateerr"
)

// Cordons. An admin cordons one GPU of a worker to keep new work off it
// (a suspect card awaiting a replacement, a GPU lent to a benchmark)
// without draining the whole node: the GPU, and every MIG device of it,
// is no longer offered, while the tasks on it run on. The cordon is the
// worker's (Worker.Cordons), not the device report's, so the agent's next
// report, which replaces the devices, keeps it; a cordon outlives the GPU
// leaving the inventory and holds again if it comes back.

// Cordon cordons GPU c.UUID of w (c.Cordon) or lifts its cordon. A GPU w
// does not report is not found; cordoning a cordoned GPU again replaces
// its reason, lifting a cordon that is not there changes nothing. Both
// are audited, a cordon but for a drain's, which its drain audits (the
// caller stops the tasks on the GPU).
func Cordon(fx Effects, w *record.Worker, c command.CordonDevice) error {
	if c.Drain && !c.Cordon {
		return fmt.Errorf("a drain cordons the GPU too: %w", stateerr.ErrInvalid)
	}
	_, cordonedNow := w.Cordons[c.UUID]
	// A GPU is cordoned (or drained) only while its worker reports it; it
	// is uncordoned while either holds (a cordoned GPU that left the
	// report can still be uncordoned); otherwise it is not found.
	reported := slices.ContainsFunc(w.Devices, func(d command.Device) bool { return d.UUID == c.UUID })
	if !reported && (c.Cordon || !cordonedNow) {
		return fmt.Errorf("worker %s has no GPU %s: %w", w.ID, c.UUID, stateerr.ErrNotFound)
	}
	if !c.Cordon && !cordonedNow {
		return nil
	}
	cordons := maps.Clone(w.Cordons)
	if c.Cordon {
		if cordons == nil {
			cordons = map[string]string{}
		}
		cordons[c.UUID] = c.Reason
		if !c.Drain {
			fx.Audit(command.AuditEvent{Time: c.Now, Kind: "gpu.cordoned", Actor: c.By, WorkerID: w.ID, Subject: c.UUID, Source: c.Source, Detail: c.Reason})
		}
	} else {
		delete(cordons, c.UUID)
		if len(cordons) == 0 {
			cordons = nil
		}
		fx.MarkPending() // the GPU is offered again
		fx.Audit(command.AuditEvent{Time: c.Now, Kind: "gpu.uncordoned", Actor: c.By, WorkerID: w.ID, Subject: c.UUID, Source: c.Source})
	}
	w.Cordons = cordons
	return nil
}

// OnGPU is the devices a task on GPU uuid of w may hold: the GPU and its
// MIG devices.
func OnGPU(w *record.Worker, uuid string) []string {
	on := []string{uuid}
	for _, d := range w.Devices {
		if d.Parent == uuid {
			on = append(on, d.UUID)
		}
	}
	return on
}
