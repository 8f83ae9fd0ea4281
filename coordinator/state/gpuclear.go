package state

import (
	"fmt"
	"slices"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/sched/fit"
)

// Clearing a GPU. A GPU the agent took out of service (a fault, or a
// quarantine after flapping) comes back only by the agent's own tracker,
// which only the agent's host can see; an admin asks for it here, the
// request rides on the worker's heartbeat answers, and it is settled when
// the worker's device report shows the GPU back (recovering or healthy)
// or gone. Requests and their settling are audited.

// health words of a device report that mean "in service or on its way".
const (
	healthHealthy    = "healthy"
	healthRecovering = "recovering"
	healthUnhealthy  = "unhealthy"        // and out of service (gpufault.go)
	healthDegraded   = fit.HealthDegraded // in service, placed last (package fit)
)

// clearGPU records an admin's request to clear one of a worker's GPUs.
func (s *Store) clearGPU(c command.ClearGPU) (WorkerRecord, error) {
	w, ok := s.workers[c.WorkerID]
	if !ok {
		return WorkerRecord{}, fmt.Errorf("worker %s: %w", c.WorkerID, ErrNotFound)
	}
	if w.Status == workerRevoked {
		return WorkerRecord{}, fmt.Errorf("worker %s is revoked: %w", w.ID, ErrConflict)
	}
	i := slices.IndexFunc(w.Devices, func(d command.Device) bool { return d.UUID == c.UUID })
	if i < 0 {
		return WorkerRecord{}, fmt.Errorf("worker %s has no GPU %s: %w", w.ID, c.UUID, ErrNotFound)
	}
	if inService(w.Devices[i]) {
		return WorkerRecord{}, fmt.Errorf("GPU %s is %s, not in fault: %w", c.UUID, healthWord(w.Devices[i]), ErrConflict)
	}
	if !slices.Contains(w.ClearGPUs, c.UUID) {
		w.ClearGPUs = slices.Sorted(slices.Values(append(slices.Clone(w.ClearGPUs), c.UUID)))
	}
	s.audit.Record(command.AuditEvent{Time: c.Now, Kind: "gpu.clear_requested", Actor: c.By, WorkerID: w.ID, Subject: c.UUID, Source: c.Source,
		Detail: healthWord(w.Devices[i]) + ": " + w.Devices[i].HealthReason})
	return s.workerRecord(w), nil
}

// inService reports whether a device is healthy or on its way back.
func inService(d command.Device) bool {
	return d.Healthy || d.Health == healthHealthy || d.Health == healthRecovering || d.Health == healthDegraded
}

// settleClears drops the requests the worker's new device report answers:
// its GPU is back in service, or no longer there.
func (s *Store) settleClears(w *Worker, now time.Time) {
	if len(w.ClearGPUs) == 0 {
		return
	}
	var kept []string
	for _, uuid := range w.ClearGPUs {
		i := slices.IndexFunc(w.Devices, func(d command.Device) bool { return d.UUID == uuid })
		switch {
		case i < 0:
			s.audit.Record(command.AuditEvent{Time: now, Kind: "gpu.clear_settled", WorkerID: w.ID, Subject: uuid, Detail: "the GPU is gone"})
		case inService(w.Devices[i]):
			s.audit.Record(command.AuditEvent{Time: now, Kind: "gpu.clear_settled", WorkerID: w.ID, Subject: uuid, Detail: healthWord(w.Devices[i])})
		default:
			kept = append(kept, uuid)
		}
	}
	w.ClearGPUs = kept
}
