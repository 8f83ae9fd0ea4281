package state

import (
	"fmt"
	"maps"
	"slices"

	"github.com/gpulayer/gpulayer/coordinator/command"
)

// Cordons. An admin cordons one GPU of a worker to keep new work off it
// (a suspect card awaiting a replacement, a GPU lent to a benchmark)
// without draining the whole node: the GPU, and every MIG device of it,
// is no longer offered (offered, gpuapproval.go), while the tasks on it
// run on. The cordon is the worker's (Worker.Cordons), not the device
// report's, so the agent's next report, which replaces the devices,
// keeps it; a cordon outlives the GPU leaving the inventory and holds
// again if it comes back.

// cordonDevice cordons a worker's GPU (c.Cordon) or lifts the cordon. A
// GPU the worker does not report is not found; cordoning a cordoned GPU
// again replaces its reason, lifting a cordon that is not there changes
// nothing. Both are audited.
func (s *Store) cordonDevice(c command.CordonDevice) (WorkerRecord, error) {
	w, ok := s.workers[c.WorkerID]
	if !ok {
		return WorkerRecord{}, fmt.Errorf("worker %s: %w", c.WorkerID, ErrNotFound)
	}
	if w.Status == workerRevoked {
		return WorkerRecord{}, fmt.Errorf("worker %s is revoked: %w", w.ID, ErrConflict)
	}
	if c.Drain && !c.Cordon {
		return WorkerRecord{}, fmt.Errorf("a drain cordons the GPU too: %w", ErrInvalid)
	}
	_, cordonedNow := w.Cordons[c.UUID]
	// A GPU is cordoned (or drained) only while its worker reports it; it
	// is uncordoned while either holds (a cordoned GPU that left the
	// report can still be uncordoned); otherwise it is not found.
	reported := slices.ContainsFunc(w.Devices, func(d command.Device) bool { return d.UUID == c.UUID })
	if !reported && (c.Cordon || !cordonedNow) {
		return WorkerRecord{}, fmt.Errorf("worker %s has no GPU %s: %w", w.ID, c.UUID, ErrNotFound)
	}
	if !c.Cordon && !cordonedNow {
		return s.workerRecord(w), nil
	}
	cordons := maps.Clone(w.Cordons) // replaced, never edited: a capture may hold the map
	if c.Cordon {
		if cordons == nil {
			cordons = map[string]string{}
		}
		cordons[c.UUID] = c.Reason
		if !c.Drain { // a drain is audited as such (gpudrain.go)
			s.audit.Record(command.AuditEvent{Time: c.Now, Kind: "gpu.cordoned", Actor: c.By, WorkerID: w.ID, Subject: c.UUID, Source: c.Source, Detail: c.Reason})
		}
	} else {
		delete(cordons, c.UUID)
		if len(cordons) == 0 {
			cordons = nil
		}
		s.markPending() // the GPU is offered again
		s.audit.Record(command.AuditEvent{Time: c.Now, Kind: "gpu.uncordoned", Actor: c.By, WorkerID: w.ID, Subject: c.UUID, Source: c.Source})
	}
	w.Cordons = cordons
	if c.Drain {
		s.drainGPU(w, c) // gpudrain.go
	}
	return s.workerRecord(w), nil
}
