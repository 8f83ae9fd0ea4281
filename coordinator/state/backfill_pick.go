package state

import (
	"time"

	"github.com/gpulayer/gpulayer/coordinator/sched/backfill"
	"github.com/gpulayer/gpulayer/coordinator/sched/place"
)

// pickDevicesFor picks the devices on w for task t of j, leaving out the
// GPUs the head holds unless j may backfill them (place.Hold). A task a
// preemption freed GPUs for on w (preempt_holds.go) is not held back by
// the head: the preemption already chose it, and its GPUs would
// otherwise sit idle between the two holds.
func (s *Store) pickDevicesFor(w *Worker, j *Job, t *Task, h *backfill.Hold, now time.Time) ([]string, bool) {
	if h.Spares(j, now) || place.HoldsFor(s.planView(), w, t.ID, now) {
		return place.PickDevices(s.planView(), w, j.Spec.Resources, nil)
	}
	return place.PickDevices(s.planView(), w, j.Spec.Resources, h.Devices)
}
