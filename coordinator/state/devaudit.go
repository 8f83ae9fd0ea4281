package state

import (
	"cmp"
	"fmt"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
)

// auditDevices records what a worker's new device report changes: each
// GPU that appears (gpu.added), goes (gpu.removed) or changes health
// (gpu.health, "healthy -> unhealthy: xid 79 …"), in the report's order
// and then the old one's, so that every replica records the same events.
func (s *Store) auditDevices(w *Worker, next []command.Device, now time.Time) {
	old := make(map[string]command.Device, len(w.Devices))
	for _, d := range w.Devices {
		old[d.UUID] = d
	}
	seen := make(map[string]bool, len(next))
	for _, d := range next {
		seen[d.UUID] = true
		was, ok := old[d.UUID]
		switch {
		case !ok:
			s.audit.Record(command.AuditEvent{Time: now, Kind: "gpu.added", WorkerID: w.ID, Subject: d.UUID, Detail: fmt.Sprintf("%s, %d MiB, %s", d.Name, d.MemoryMiB, healthWord(d))})
		case healthWord(was) != healthWord(d) || was.HealthReason != d.HealthReason:
			detail := healthWord(was) + " -> " + healthWord(d)
			if d.HealthReason != "" {
				detail += ": " + d.HealthReason
			}
			s.audit.Record(command.AuditEvent{Time: now, Kind: "gpu.health", WorkerID: w.ID, Subject: d.UUID, Detail: detail})
		}
	}
	for _, d := range w.Devices {
		if !seen[d.UUID] {
			s.audit.Record(command.AuditEvent{Time: now, Kind: "gpu.removed", WorkerID: w.ID, Subject: d.UUID, Detail: d.Name})
		}
	}
}

// healthWord is a device's health as one word: its reported state, or
// for an agent that does not watch health, whether it may be given work.
func healthWord(d command.Device) string {
	if d.Healthy {
		return cmp.Or(d.Health, "healthy")
	}
	return cmp.Or(d.Health, "unhealthy")
}
