package state

import (
	"maps"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/sched/backfill"
	"github.com/gpulayer/gpulayer/coordinator/sched/fit"
	"github.com/gpulayer/gpulayer/coordinator/sched/place"
	"github.com/gpulayer/gpulayer/coordinator/state/teams"
)

// pickDevicesFor picks the devices on w for task t of j, leaving out the
// GPUs the head holds unless j may backfill them (backfill.go). A task a
// preemption freed GPUs for on w (preempt_holds.go) is not held back by
// the head: the preemption already chose it, and its GPUs would
// otherwise sit idle between the two holds.
func (s *Store) pickDevicesFor(w *Worker, j *Job, t *Task, h *backfill.Hold, now time.Time) ([]string, bool) {
	if h.Spares(j, now) || s.holdsFor(w, t.ID, now) {
		return s.pickDevices(w, j.Spec.Resources)
	}
	return s.pickDevicesBut(w, j.Spec.Resources, h.Devices)
}

// planGangWithin plans gang j as planGang does, leaving out the GPUs the
// head holds unless j may backfill them, and keeps only a placement its
// team has room for (teamroom.go).
func (s *Store) planGangWithin(w *Worker, capability string, slots int, j *Job, lim teams.Limits, use int64, h *backfill.Hold, now time.Time) ([]place.Member, bool) {
	if lim.RoomFor(use, fit.WholeCenti(j.Spec), j.Spec.IsPreemptible()) != nil && fit.WholeCenti(j.Spec) > 1 {
		return nil, false // a gang of whole GPUs needs exactly that: no plan can fit
	}
	tent := place.NewTentative()
	if !h.Spares(j, now) {
		tent.Reserve(maps.Keys(h.Devices))
	}
	plan, ok := s.planGangFrom(w, capability, slots, j, tent)
	if !ok {
		return nil, false
	}
	var centi int64
	for _, m := range plan {
		centi += fit.TaskCenti(s.workers[m.WorkerID], m.Devices, j.Spec.Resources)
	}
	return plan, lim.RoomFor(use, centi, j.Spec.IsPreemptible()) == nil
}
