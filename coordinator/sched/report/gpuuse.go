package report

import (
	"slices"

	"github.com/gpulayer/gpulayer/coordinator/sched/fit"
	"github.com/gpulayer/gpulayer/coordinator/sched/place"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
)

// The fleet's GPUs as the API reads them (GET /v1/gpus, the GPU counts):
// from each worker's active tasks (never the whole task table), so a
// read costs what the fleet holds now.

// GPUHolder is a task that holds a GPU: whole, or by a memory share of
// ShareMiB.
type GPUHolder struct {
	TaskID    string
	JobID     string
	AttemptID string
	ShareMiB  uint64
}

// Holders maps each of w's devices that an active task holds to those
// tasks, in task id order; holding reads an active task.
func Holders(w *record.Worker, holding func(taskID string) place.Holding) map[string][]GPUHolder {
	ids := slices.Sorted(w.Held())
	out := map[string][]GPUHolder{}
	for _, id := range ids {
		h := holding(id)
		var share uint64
		if r := h.Job.Spec.Resources; r.Shared() {
			share = r.GPUMemoryMiB
		}
		for _, d := range h.Task.Devices {
			out[d] = append(out[d], GPUHolder{TaskID: h.Task.ID, JobID: h.Task.JobID, AttemptID: h.Task.AttemptID, ShareMiB: share})
		}
	}
	return out
}

// GPUCounts are a GPU model's devices by what they can do now, each
// device in one count at most.
type GPUCounts struct {
	// Allocated are held by an active task, whole or by a share.
	Allocated int
	// Free are offered (healthy and approved), held by no task, on a
	// ready worker: what placement can give out now.
	Free int
	// Unhealthy are reported not healthy by their agent (unhealthy,
	// recovering or unknown), held or not.
	Unhealthy int
	// Degraded are reported degraded by their agent (offered, last:
	// package fit: Degraded), held or not; each is also in one of the
	// counts above.
	Degraded int
}

// CountGPUs adds w's devices to by, keyed by model (the device's name as
// NVML gives it; a MIG device's is "MIG <profile>"). A GPU in MIG mode is
// given out as its MIG devices only, so those are counted instead of it.
// A revoked worker's devices are not counted: it gets no more work and
// its agent no longer reports. A device neither held, unhealthy nor free
// (on a draining, offline or pending worker, or awaiting approval) is in
// no count.
func CountGPUs(w *record.Worker, holding func(taskID string) place.Holding, by map[string]GPUCounts) {
	if w.Status == record.WorkerRevoked || len(w.Devices) == 0 {
		return
	}
	whole, shared := place.DeviceUse(w, holding, nil)
	for _, d := range w.Devices {
		if d.MIGEnabled {
			continue
		}
		c := by[d.Name]
		_, isShared := shared[d.UUID]
		if fit.Degraded(d) {
			c.Degraded++
		}
		switch {
		case !d.Healthy:
			c.Unhealthy++
		case whole[d.UUID] || isShared:
			c.Allocated++
		case w.Status == record.WorkerReady && fit.Offered(w, d):
			c.Free++
		}
		by[d.Name] = c
	}
}
