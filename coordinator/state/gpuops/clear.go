package gpuops

import (
	"fmt"
	"slices"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
	"github.com/gpulayer/gpulayer/coordinator/state/stateerr"
)

// Clearing a GPU. A GPU the agent took out of service (a fault, or a
// quarantine after flapping) comes back only by the agent's own tracker,
// which only the agent's host can see; an admin asks for it here, the
// request rides on the worker's heartbeat answers, and it is settled when
// the worker's device report shows the GPU back (recovering or healthy)
// or gone. Requests and their settling are audited.

// Clear records an admin's request to clear GPU c.UUID of w.
func Clear(fx Effects, w *record.Worker, c command.ClearGPU) error {
	i := slices.IndexFunc(w.Devices, func(d command.Device) bool { return d.UUID == c.UUID })
	if i < 0 {
		return fmt.Errorf("worker %s has no GPU %s: %w", w.ID, c.UUID, stateerr.ErrNotFound)
	}
	if InService(w.Devices[i]) {
		return fmt.Errorf("GPU %s is %s, not in fault: %w", c.UUID, HealthWord(w.Devices[i]), stateerr.ErrConflict)
	}
	if !slices.Contains(w.ClearGPUs, c.UUID) {
		w.ClearGPUs = slices.Sorted(slices.Values(append(slices.Clone(w.ClearGPUs), c.UUID)))
	}
	fx.Audit(command.AuditEvent{Time: c.Now, Kind: "gpu.clear_requested", Actor: c.By, WorkerID: w.ID, Subject: c.UUID, Source: c.Source,
		Detail: HealthWord(w.Devices[i]) + ": " + w.Devices[i].HealthReason})
	return nil
}

// SettleClears drops the requests w's new device report answers: its GPU
// is back in service, or no longer there.
func SettleClears(fx Effects, w *record.Worker, now time.Time) {
	if len(w.ClearGPUs) == 0 {
		return
	}
	var kept []string
	for _, uuid := range w.ClearGPUs {
		i := slices.IndexFunc(w.Devices, func(d command.Device) bool { return d.UUID == uuid })
		switch {
		case i < 0:
			fx.Audit(command.AuditEvent{Time: now, Kind: "gpu.clear_settled", WorkerID: w.ID, Subject: uuid, Detail: "the GPU is gone"})
		case InService(w.Devices[i]):
			fx.Audit(command.AuditEvent{Time: now, Kind: "gpu.clear_settled", WorkerID: w.ID, Subject: uuid, Detail: HealthWord(w.Devices[i])})
		default:
			kept = append(kept, uuid)
		}
	}
	w.ClearGPUs = kept
}
