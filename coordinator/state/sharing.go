package state

import (
	"cmp"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/sched/fit"
)

// Fractional GPU sharing (docs/gpus.md, "Fractional sharing"). A task
// whose resources set gpu_sharing takes gpu_memory_mib of one whole GPU's
// memory instead of the GPU. A GPU is then either held whole, by one
// exclusive task, or shared, by tasks whose shares sum to at most its
// memory; it is never both. A GPU in MIG mode and MIG devices are never
// shared, and an "enforced" share goes only to a GPU whose agent reports
// how it enforces it (Device.Sharing). Everything here reads the
// replicated records only, so every coordinator decides alike.

// deviceUse is how a worker's active tasks hold its devices: whole, or
// by the sum of the shares on each shared GPU (MiB).
func (s *Store) deviceUse(w *Worker) (whole map[string]bool, shared map[string]uint64) {
	return s.deviceUseBeside(w, nil)
}

// deviceUseBeside is deviceUse were the tasks of gone not there
// (package preemption reads it through the store's planView).
func (s *Store) deviceUseBeside(w *Worker, gone map[string]bool) (whole map[string]bool, shared map[string]uint64) {
	whole, shared = map[string]bool{}, map[string]uint64{}
	for id := range w.Held() {
		if gone[id] {
			continue
		}
		t := s.tasks.Get(id)
		r := s.jobs.Get(t.JobID).Spec.Resources
		for _, d := range t.Devices {
			if r.Shared() {
				shared[d] += r.GPUMemoryMiB
			} else {
				whole[d] = true
			}
		}
	}
	return whole, shared
}

// pickShare chooses the GPU of w a shared task takes: of the offered GPUs
// no task holds whole that have room for its share, a healthy one before
// a degraded one (fit.Degraded), then the one its share leaves fullest (so that whole GPUs stay whole, and large shares find
// room), the first in the worker's order on a tie.
func (s *Store) pickShare(w *Worker, r *command.Resources) ([]string, bool) {
	best, bestLeft, bestDegraded := "", uint64(0), false
	for _, vd := range s.viewOf(w).offered { // workerview.go
		d := vd.dev
		if vd.whole || !fit.ShareFits(d, r, vd.used) {
			continue
		}
		left := d.MemoryMiB - vd.used - r.GPUMemoryMiB
		if best == "" || cmp.Or(fit.CompareDegraded(fit.Degraded(d), bestDegraded), cmp.Compare(left, bestLeft)) < 0 {
			best, bestLeft, bestDegraded = d.UUID, left, fit.Degraded(d)
		}
	}
	if best == "" {
		return nil, false
	}
	return []string{best}, true
}

// shareFree reports whether the shared task asking r may be given devs
// on w now: one offered GPU, held by no task whole, with room for its
// share.
func (s *Store) shareFree(w *Worker, devs []string, r *command.Resources) bool {
	if len(devs) != 1 {
		return false
	}
	whole, shared := s.deviceUse(w)
	for _, d := range w.Devices {
		if d.UUID == devs[0] {
			return fit.Offered(w, d) && !whole[d.UUID] && fit.ShareFits(d, r, shared[d.UUID])
		}
	}
	return false
}

// devicesFreeFor reports whether devs may be given on w now to a task
// asking r: shared or whole.
func (s *Store) devicesFreeFor(w *Worker, devs []string, r *command.Resources) bool {
	if r.Shared() {
		return s.shareFree(w, devs, r)
	}
	return s.devicesFree(w, devs)
}
