package place

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/sched/fit"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
	"github.com/gpulayer/gpulayer/coordinator/state/stateerr"
)

// Fleet is what the rules about one worker read beyond its record: the
// groups its targets and affinity name, and its view.
type Fleet interface {
	Groups
	// WorkerView is w's view (the store keeps it until it may change).
	WorkerView(w *record.Worker) *WorkerView
}

// CanRun checks everything of placing t (of job j) on w, narrowed to
// capability when it is not empty, but the availability of its devices:
// the worker's status, executor, capability, target, required affinity,
// and its exclusivity and max_per_worker against what it runs. The
// match and the state machine's check of an assignment call it alike.
func CanRun(f Fleet, w *record.Worker, j *record.Job, t *record.Task, capability string) error {
	spec := j.Spec
	switch w.Status {
	case record.WorkerRevoked:
		return fmt.Errorf("worker %s: %w", w.ID, stateerr.ErrWorkerRevoked)
	case record.WorkerPending:
		return fmt.Errorf("worker %s: %w", w.ID, stateerr.ErrWorkerPending)
	case record.WorkerDraining, record.WorkerStopping:
		return fmt.Errorf("worker %s is %s: %w", w.ID, w.Status, stateerr.ErrConflict)
	}
	if !slices.Contains(w.Executors, spec.Executor) {
		return fmt.Errorf("worker %s lacks executor %q: %w", w.ID, spec.Executor, stateerr.ErrConflict)
	}
	if !fit.CapabilityAllows(w.Capabilities, capability, spec.Capability) {
		return fmt.Errorf("worker %s lacks capability %q: %w", w.ID, spec.Capability, stateerr.ErrConflict)
	}
	if !satisfies(f, w, spec.Target) {
		return fmt.Errorf("task %s targets %s %s: %w", t.ID, spec.Target.Kind, spec.Target.ID, stateerr.ErrConflict)
	}
	if r, broken := requiredRule(f, w, j.Rules()); broken {
		return fmt.Errorf("worker %s breaks job %s's required affinity %+v: %w", w.ID, j.ID, r, stateerr.ErrConflict)
	}
	v := f.WorkerView(w)
	if w.HeldCount() > 0 && (spec.ExclusiveWorker || v.Exclusive) {
		return fmt.Errorf("worker %s is exclusive: %w", w.ID, stateerr.ErrConflict)
	}
	if sameJob := v.PerJob[j.ID]; spec.MaxPerWorker > 0 && sameJob >= spec.MaxPerWorker {
		return fmt.Errorf("job %s already runs %d tasks on %s: %w", j.ID, sameJob, w.ID, stateerr.ErrConflict)
	}
	return nil
}

// PickDevices chooses w's devices for a task asking r, leaving out those
// in but: for a share, the GPU pickShare chooses; else the best-connected
// set of free devices that fit, healthy ones first. false: none fits.
func PickDevices(f Fleet, w *record.Worker, r *command.Resources, but map[string]bool) ([]string, bool) {
	if r == nil || r.GPUs == 0 {
		return nil, true
	}
	if r.Shared() {
		devs, ok := pickShare(f.WorkerView(w), r)
		return devs, ok && !but[devs[0]]
	}
	var fitting []command.Device
	for _, d := range f.WorkerView(w).Free {
		if !but[d.UUID] && fit.DeviceFits(d, r) {
			fitting = append(fitting, d)
		}
	}
	if len(fitting) < r.GPUs {
		return nil, false
	}
	return fit.PickConnected(fit.HealthyFirst(fitting, r.GPUs), r.GPUs), true
}

// pickShare chooses the GPU a shared task takes: of the offered GPUs no
// task holds whole that have room for its share, a healthy one before a
// degraded one (fit.Degraded), then the one its share leaves fullest (so
// that whole GPUs stay whole, and large shares find room), the first in
// the worker's order on a tie.
func pickShare(v *WorkerView, r *command.Resources) ([]string, bool) {
	best, bestLeft, bestDegraded := "", uint64(0), false
	for _, od := range v.Offered {
		d := od.Device
		if od.Whole || !fit.ShareFits(d, r, od.Used) {
			continue
		}
		left := d.MemoryMiB - od.Used - r.GPUMemoryMiB
		if best == "" || cmp.Or(fit.CompareDegraded(fit.Degraded(d), bestDegraded), cmp.Compare(left, bestLeft)) < 0 {
			best, bestLeft, bestDegraded = d.UUID, left, fit.Degraded(d)
		}
	}
	if best == "" {
		return nil, false
	}
	return []string{best}, true
}

// DevicesFree reports whether devs are free on w now: each offered, held
// by no active task, and named once.
func DevicesFree(f Fleet, w *record.Worker, devs []string) bool {
	free := map[string]bool{}
	for _, d := range f.WorkerView(w).Free {
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

// DevicesFreeFor reports whether devs may be given on w now to a task
// asking r: for a share, one offered GPU held by no task whole with room
// for it; else DevicesFree.
func DevicesFreeFor(f Fleet, w *record.Worker, devs []string, r *command.Resources) bool {
	if !r.Shared() {
		return DevicesFree(f, w, devs)
	}
	if len(devs) != 1 {
		return false
	}
	for _, od := range f.WorkerView(w).Offered {
		if od.Device.UUID == devs[0] {
			return !od.Whole && fit.ShareFits(od.Device, r, od.Used)
		}
	}
	return false
}
