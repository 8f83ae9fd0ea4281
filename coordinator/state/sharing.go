package state

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
