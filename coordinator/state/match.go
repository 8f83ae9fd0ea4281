package state

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// Candidate is a task acquire may hand to a worker, with the devices it
// would get.
type Candidate struct {
	TaskID  string
	Devices []string
}

// Match finds the best pending task that worker can run now: highest
// priority, then oldest. It looks only at queues of executors the worker
// has. skip names tasks already being handed out by concurrent acquires.
func (s *Store) Match(workerID, capability string, skip map[string]bool) (Candidate, bool, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	w, ok := s.workers[workerID]
	if !ok {
		return Candidate{}, false, fmt.Errorf("worker %s: %w", workerID, ErrWorkerNotRegistered)
	}
	switch w.Status {
	case api.WorkerRevoked:
		return Candidate{}, false, fmt.Errorf("worker %s: %w", workerID, ErrWorkerRevoked)
	case api.WorkerPending:
		return Candidate{}, false, fmt.Errorf("worker %s: %w", workerID, ErrWorkerPending)
	case api.WorkerReady, api.WorkerOffline:
	default:
		return Candidate{}, false, nil
	}
	var best *Task
	var bestDevices []string
	for _, ex := range w.Executors {
		s.queue.each(ex, func(t *Task) bool {
			if best != nil && !s.queue.less(t, best) {
				return false // the rest of this queue ranks lower
			}
			if skip[t.ID] {
				return true
			}
			j := s.jobs[t.JobID]
			if s.canRun(w, j, t, capability) != nil {
				return true
			}
			devs, ok := s.pickDevices(w, j.Spec.Resources)
			if !ok {
				return true
			}
			best, bestDevices = t, devs
			return false
		})
	}
	if best == nil {
		return Candidate{}, false, nil
	}
	return Candidate{TaskID: best.ID, Devices: bestDevices}, true, nil
}

// canRun checks everything but device availability.
func (s *Store) canRun(w *Worker, j *Job, t *Task, capability string) error {
	spec := j.Spec
	if w.Status == api.WorkerRevoked {
		return fmt.Errorf("worker %s: %w", w.ID, ErrWorkerRevoked)
	}
	if w.Status == api.WorkerPending {
		return fmt.Errorf("worker %s: %w", w.ID, ErrWorkerPending)
	}
	if !slices.Contains(w.Executors, spec.Executor) {
		return fmt.Errorf("worker %s lacks executor %q: %w", w.ID, spec.Executor, ErrConflict)
	}
	if !capabilityAllows(w.Capabilities, capability, spec.Capability) {
		return fmt.Errorf("worker %s lacks capability %q: %w", w.ID, spec.Capability, ErrConflict)
	}
	if spec.Target != nil {
		if spec.Target.Kind != api.TargetWorker || spec.Target.ID != w.ID {
			return fmt.Errorf("task %s targets %s %s: %w", t.ID, spec.Target.Kind, spec.Target.ID, ErrConflict)
		}
	}
	sameJob := 0
	for id := range w.active {
		other := s.tasks[id]
		if spec.ExclusiveWorker || s.jobs[other.JobID].Spec.ExclusiveWorker {
			return fmt.Errorf("worker %s is exclusive: %w", w.ID, ErrConflict)
		}
		if other.JobID == j.ID {
			sameJob++
		}
	}
	if spec.MaxPerWorker > 0 && sameJob >= spec.MaxPerWorker {
		return fmt.Errorf("job %s already runs %d tasks on %s: %w", j.ID, sameJob, w.ID, ErrConflict)
	}
	return nil
}

// capabilityAllows applies the capability rules: ["*"] takes anything,
// no capabilities take nothing, names take tasks whose capability is listed
// or empty. The acquire request's capability narrows further.
func capabilityAllows(workerCaps []string, narrow, want string) bool {
	if len(workerCaps) == 0 {
		return false
	}
	if narrow != "" {
		if want != narrow {
			return false
		}
		if !slices.Contains(workerCaps, "*") && !slices.Contains(workerCaps, narrow) {
			return false
		}
		return true
	}
	if want == "" || slices.Contains(workerCaps, "*") {
		return true
	}
	return slices.Contains(workerCaps, want)
}

// freeDevices lists the worker's healthy devices no active task holds.
func (s *Store) freeDevices(w *Worker) []api.Device {
	used := map[string]bool{}
	for id := range w.active {
		for _, d := range s.tasks[id].Devices {
			used[d] = true
		}
	}
	var free []api.Device
	for _, d := range w.Devices {
		if d.Healthy && !used[d.UUID] {
			free = append(free, d)
		}
	}
	return free
}

func (s *Store) pickDevices(w *Worker, r *api.Resources) ([]string, bool) {
	if r == nil || r.GPUs == 0 {
		return nil, true
	}
	var out []string
	for _, d := range s.freeDevices(w) {
		if r.GPUMemoryMiB > 0 && d.MemoryMiB < r.GPUMemoryMiB {
			continue
		}
		if r.GPUModel != "" && !strings.Contains(strings.ToLower(d.Name), strings.ToLower(r.GPUModel)) {
			continue
		}
		if r.ComputeCapability != "" && d.ComputeCapability != "" && d.ComputeCapability < r.ComputeCapability {
			continue
		}
		out = append(out, d.UUID)
		if len(out) == r.GPUs {
			return out, true
		}
	}
	return nil, false
}

func (s *Store) devicesFree(w *Worker, devs []string) bool {
	free := map[string]bool{}
	for _, d := range s.freeDevices(w) {
		free[d.UUID] = true
	}
	for _, d := range devs {
		if !free[d] {
			return false
		}
		delete(free, d)
	}
	return true
}
