package view

import (
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/coordinator/translate"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// Worker renders a worker; lists it has none of render as empty lists.
func Worker(r state.WorkerRecord) api.Worker {
	w := r.Worker
	devices := translate.DevicesToAPI(w.Devices)
	if devices == nil {
		devices = []api.Device{}
	}
	for i, d := range devices {
		why, ok := r.Unapproved[d.UUID]
		if !ok {
			continue
		}
		reason := "not offered until an admin approves the worker's GPUs (gpulayer worker approve-gpus " + w.ID + "): " + why
		if d.HealthReason != "" {
			reason += "; " + d.HealthReason
		}
		devices[i].Healthy, devices[i].PendingApproval, devices[i].HealthReason = false, true, reason
	}
	cordonedDevices(w.Cordons, devices)
	migs := migLayouts(w.MIGLayouts, devices) // miglayout.go
	idleDevices(w.ID, w.Status, devices)
	notOfferedNotHealthy(devices)
	return api.Worker{
		WorkerID:     w.ID,
		Status:       w.Status,
		Labels:       w.Labels,
		Capabilities: nonNil(w.Capabilities),
		Executors:    nonNil(w.Executors),
		Devices:      devices,
		RunningTasks: nonNil(r.RunningTasks),
		RegisteredAt: api.FormatTime(w.RegisteredAt),
		RegisteredBy: w.RegisteredBy,
		Groups:       r.Groups,

		Origin:            w.Origin,
		InstanceID:        w.InstanceID,
		ClusterKey:        w.ClusterKey,
		ExternalWorkerKey: w.ExternalWorkerKey,
		TokenID:           w.TokenID,
		ApprovedBy:        w.ApprovedBy,
		ApprovedAt:        api.FormatTime(w.ApprovedAt),
		DrainDeadline:     api.FormatTime(w.DrainDeadline),
		DrainedBy:         w.DrainedBy,
		Deregistering:     w.Deregister,
		ClearGPUs:         w.ClearGPUs,
		MIGLayouts:        migs,
	}
}

// Workers renders a list of workers, in its order.
func Workers(rs []state.WorkerRecord) []api.Worker {
	return each(rs, Worker)
}

// each renders every record of a list with one function; an empty list
// renders as an empty, not a missing, one.
func each[R, V any](rs []R, render func(R) V) []V {
	out := make([]V, len(rs))
	for i, r := range rs {
		out[i] = render(r)
	}
	return out
}
