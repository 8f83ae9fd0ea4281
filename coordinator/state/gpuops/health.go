package gpuops

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/sched/fit"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
)

// Health words of a device report.
const (
	HealthHealthy    = "healthy"
	HealthRecovering = "recovering"
	HealthUnhealthy  = "unhealthy"        // and out of service
	HealthDegraded   = fit.HealthDegraded // in service, placed last (package fit)
)

// InService reports whether a device is healthy or on its way back.
func InService(d command.Device) bool {
	return d.Healthy || d.Health == HealthHealthy || d.Health == HealthRecovering || d.Health == HealthDegraded
}

// HealthWord is a device's health as the audit names it: its agent's
// word, or healthy/unhealthy from a report that gives none.
func HealthWord(d command.Device) string {
	if d.Healthy {
		return cmp.Or(d.Health, HealthHealthy)
	}
	return cmp.Or(d.Health, HealthUnhealthy)
}

// AuditDevices audits what a device report changes of w's devices (w
// still holds the old ones): a GPU added, one gone, a change of health
// or of its reason.
func AuditDevices(fx Effects, w *record.Worker, next []command.Device, now time.Time) {
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
			fx.Audit(command.AuditEvent{Time: now, Kind: "gpu.added", WorkerID: w.ID, Subject: d.UUID, Detail: fmt.Sprintf("%s, %d MiB, %s", d.Name, d.MemoryMiB, HealthWord(d))})
		case HealthWord(was) != HealthWord(d) || was.HealthReason != d.HealthReason:
			detail := HealthWord(was) + " -> " + HealthWord(d)
			if d.HealthReason != "" {
				detail += ": " + d.HealthReason
			}
			fx.Audit(command.AuditEvent{Time: now, Kind: "gpu.health", WorkerID: w.ID, Subject: d.UUID, Detail: detail})
		}
	}
	for _, d := range w.Devices {
		if !seen[d.UUID] {
			fx.Audit(command.AuditEvent{Time: now, Kind: "gpu.removed", WorkerID: w.ID, Subject: d.UUID, Detail: d.Name})
		}
	}
}

// MarkFailed takes GPU uuid of w out of service, for why, as its agent
// would report it (a fault under a task): audited as a change of
// health. A GPU w does not report, or already out of service, is left.
func MarkFailed(fx Effects, w *record.Worker, uuid, why string, now time.Time) {
	i := slices.IndexFunc(w.Devices, func(d command.Device) bool { return d.UUID == uuid })
	if i < 0 || !w.Devices[i].Healthy {
		return
	}
	devices := slices.Clone(w.Devices)
	devices[i].Healthy, devices[i].Health, devices[i].HealthReason = false, HealthUnhealthy, why
	AuditDevices(fx, w, devices, now) // "healthy -> unhealthy: …"
	w.Devices = devices
}
