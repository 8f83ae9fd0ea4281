package state

import (
	"github.com/gpulayer/gpulayer/coordinator/sched/fit"
	"github.com/gpulayer/gpulayer/coordinator/sched/place"
)

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
	// package fit: Degraded), held or not; each is also in one of the counts above.
	Degraded int
}

// countGPUs adds w's devices to by, keyed by model (the device's name as
// NVML gives it; a MIG device's is "MIG <profile>"). A GPU in MIG mode is
// given out as its MIG devices only, so those are counted instead of it.
// A revoked worker's devices are not counted: it gets no more work and
// its agent no longer reports. A device neither held, unhealthy nor free
// (on a draining, offline or pending worker, or awaiting approval) is in
// no count.
func (s *Store) countGPUs(w *Worker, by map[string]GPUCounts) {
	if w.Status == workerRevoked || len(w.Devices) == 0 {
		return
	}
	whole, shared := place.DeviceUse(w, s.holding, nil)
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
		case w.Status == workerReady && fit.Offered(w, d):
			c.Free++
		}
		by[d.Name] = c
	}
}
