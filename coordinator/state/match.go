package state

import (
	"fmt"
	"slices"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/sched/fit"
	"github.com/gpulayer/gpulayer/coordinator/sched/place"
	"github.com/gpulayer/gpulayer/coordinator/state/pending"
)

// Candidate is a task acquire may hand to a worker, with the devices it
// would get.
type Candidate struct {
	TaskID  string
	Devices []string
	// RetryAt, when nothing matched, is the earliest time a task passed
	// over for its affinity or spread (place's affinity.go) may be taken: the
	// caller should look again then. Zero when none was passed over.
	RetryAt time.Time
	// Gang, when the task is a gang member, places the whole gang
	// (gang.go): it is proposed as one AssignGang, not an AssignTask.
	Gang []place.Member
}

// Match finds the best pending task that worker can run now: highest
// priority, then oldest (place.Match, over the store's view). skip names
// tasks already being handed out by concurrent acquires.
func (s *Store) Match(workerID, capability string, skip map[string]bool) (Candidate, bool, error) {
	return s.MatchAt(time.Time{}, workerID, capability, 0, skip)
}

// MatchAt is Match at time now, which decides whether a task with soft
// affinity or spread is still waiting for a worker that suits it better
// (a zero now: never). slots is how many tasks the worker can take now
// (0: any number); it bounds the members of a gang it is given.
func (s *Store) MatchAt(now time.Time, workerID, capability string, slots int, skip map[string]bool) (Candidate, bool, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	w, ok := s.workers[workerID]
	if !ok {
		return Candidate{}, false, fmt.Errorf("worker %s: %w", workerID, ErrWorkerNotRegistered)
	}
	switch w.Status {
	case workerRevoked:
		return Candidate{}, false, fmt.Errorf("worker %s: %w", workerID, ErrWorkerRevoked)
	case workerPending:
		return Candidate{}, false, fmt.Errorf("worker %s: %w", workerID, ErrWorkerPending)
	case workerReady, workerOffline:
	default:
		return Candidate{}, false, nil
	}
	f := place.Match(s.planView(), w, capability, slots, skip, now)
	if f.Task == nil {
		return Candidate{RetryAt: f.RetryAt}, false, nil
	}
	return Candidate{TaskID: f.Task.ID, Devices: f.Devices, Gang: f.Gang}, true, nil
}

// targetsOf lists the target keys a worker satisfies: untargeted work,
// work for itself, and work for every group it belongs to.
func (s *Store) targetsOf(w *Worker) []string {
	out := []string{"", pending.TargetKey(&command.Target{Kind: targetWorker, ID: w.ID})}
	for _, g := range s.groups.Of(w.ID) { // sorted
		out = append(out, pending.TargetKey(&command.Target{Kind: targetGroup, ID: g}))
	}
	return out
}

// canRun checks everything but device availability.
func (s *Store) canRun(w *Worker, j *Job, t *Task, capability string) error {
	spec := j.Spec
	if w.Status == workerRevoked {
		return fmt.Errorf("worker %s: %w", w.ID, ErrWorkerRevoked)
	}
	if w.Status == workerPending {
		return fmt.Errorf("worker %s: %w", w.ID, ErrWorkerPending)
	}
	if w.Status == workerDraining || w.Status == workerStopping {
		return fmt.Errorf("worker %s is %s: %w", w.ID, w.Status, ErrConflict)
	}
	if !slices.Contains(w.Executors, spec.Executor) {
		return fmt.Errorf("worker %s lacks executor %q: %w", w.ID, spec.Executor, ErrConflict)
	}
	if !fit.CapabilityAllows(w.Capabilities, capability, spec.Capability) {
		return fmt.Errorf("worker %s lacks capability %q: %w", w.ID, spec.Capability, ErrConflict)
	}
	if !place.Satisfies(s.planView(), w, spec.Target) {
		return fmt.Errorf("task %s targets %s %s: %w", t.ID, spec.Target.Kind, spec.Target.ID, ErrConflict)
	}
	if r, broken := place.RequiredRule(s.planView(), w, j.Rules()); broken {
		return fmt.Errorf("worker %s breaks job %s's required affinity %+v: %w", w.ID, j.ID, r, ErrConflict)
	}
	v := s.viewOf(w) // workerview.go
	if w.HeldCount() > 0 && (spec.ExclusiveWorker || v.exclusive) {
		return fmt.Errorf("worker %s is exclusive: %w", w.ID, ErrConflict)
	}
	if sameJob := v.perJob[j.ID]; spec.MaxPerWorker > 0 && sameJob >= spec.MaxPerWorker {
		return fmt.Errorf("job %s already runs %d tasks on %s: %w", j.ID, sameJob, w.ID, ErrConflict)
	}
	return nil
}

// freeDevices lists the worker's healthy devices no active task holds,
// whole or by a share (sharing.go), from its view (workerview.go); the
// caller must not change the slice.
func (s *Store) freeDevices(w *Worker) []command.Device { return s.viewOf(w).free }

func (s *Store) pickDevices(w *Worker, r *command.Resources) ([]string, bool) {
	return s.pickDevicesBut(w, r, nil)
}

// pickDevicesBut is pickDevices leaving out the devices in but.
func (s *Store) pickDevicesBut(w *Worker, r *command.Resources, but map[string]bool) ([]string, bool) {
	if r == nil || r.GPUs == 0 {
		return nil, true
	}
	if r.Shared() {
		devs, ok := s.pickShare(w, r)
		return devs, ok && !but[devs[0]]
	}
	var fitting []command.Device
	for _, d := range s.freeDevices(w) {
		if !but[d.UUID] && fit.DeviceFits(d, r) {
			fitting = append(fitting, d)
		}
	}
	if len(fitting) < r.GPUs {
		return nil, false
	}
	return fit.PickConnected(fit.HealthyFirst(fitting, r.GPUs), r.GPUs), true
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
