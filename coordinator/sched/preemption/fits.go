package preemption

import (
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/sched/fit"
	"github.com/gpulayer/gpulayer/coordinator/sched/place"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
)

// deviceUsage is a worker's device use (place.DeviceUse), kept across
// the calls of one plan.
type deviceUsage struct {
	whole  map[string]bool
	shared map[string]uint64
}

// PlaceableNow reports whether some worker could take p (of job pj) at
// now as things are: a worker's devices fit it and, with teamRoom, its
// team has room for it. A task its team's room holds back is not
// placeable, free GPUs or not: only stopping tasks of its own team makes
// the room (planOn). Without teamRoom (a command written before the
// planner counted it: command.PreemptTasks.TeamRoom) the room is not
// judged, as then.
func PlaceableNow(v View, pj *record.Job, p *record.Task, now time.Time, teamRoom bool) bool {
	return placeableNow(v, v.Workers(), pj, p, nil, now, teamRoom)
}

// placeableNow is PlaceableNow over workers; use, when not nil, keeps
// each worker's device use across the calls of one plan.
func placeableNow(v View, workers []*record.Worker, pj *record.Job, p *record.Task, use map[string]deviceUsage, now time.Time, teamRoom bool) bool {
	if teamRoom && !teamRoomAfter(v, pj, nil, false) {
		return false
	}
	r := pj.Spec.Resources
	for _, w := range workers {
		u, ok := use[w.ID]
		if !ok {
			u.whole, u.shared = place.DeviceUse(w, v.Holding, nil)
			if use != nil {
				use[w.ID] = u
			}
		}
		if (r == nil || r.GPUs == 0 || fitsUse(v, w, r, p.ID, u.whole, u.shared, now)) && place.CanRun(v, w, pj, p, "") == nil {
			return true
		}
	}
	return false
}

// teamRoomAfter reports whether pj's team has room for one of its tasks
// once round's victims have stopped (round nil: as things are). A MIG or
// memory-share task's need depends on the device it gets: the least it
// can be (WholeCenti: a hundredth) says whether the team's room holds it
// back at all, and the most (a whole GPU a device: atMost) whether the
// victims chosen surely make the room, so that a preemption never stops
// a task that does not help.
func teamRoomAfter(v View, pj *record.Job, round *Round, atMost bool) bool {
	team := command.TeamOf(pj.Team)
	use := v.InUse(team)
	if round != nil {
		use = round.inUse(v, team)
	}
	need := fit.WholeCenti(pj.Spec)
	if atMost {
		need = fit.MostCenti(pj.Spec)
	}
	return v.Limits(team).RoomFor(use, need, pj.Spec.IsPreemptible()) == nil
}

// FitsBeside reports whether p (of job pj) would fit on w at now were the
// tasks of gone not there: enough offered devices meeting its terms that
// no other task holds, whole or by a share, and no preemption holds for
// another task.
func FitsBeside(v View, w *record.Worker, pj *record.Job, p *record.Task, gone map[string]bool, now time.Time) bool {
	r := pj.Spec.Resources
	if r == nil || r.GPUs == 0 {
		return true
	}
	whole, shared := place.DeviceUse(w, v.Holding, gone)
	return fitsUse(v, w, r, p.ID, whole, shared, now)
}

// fitsUse is FitsBeside with w's devices used as whole and shared say.
func fitsUse(v View, w *record.Worker, r *command.Resources, taskID string, whole map[string]bool, shared map[string]uint64, now time.Time) bool {
	n := 0
	for _, d := range w.Devices { // the cheap terms first: offered reads the device's identity
		_, used := shared[d.UUID]
		switch {
		case whole[d.UUID]:
		case r.Shared() && !fit.ShareFits(d, r, shared[d.UUID]):
		case !r.Shared() && (used || !fit.DeviceFits(d, r)):
		case !fit.Offered(w, d) || v.HeldFromOthers(w, []string{d.UUID}, taskID, now):
		case r.Shared():
			return true
		default:
			n++
		}
	}
	return !r.Shared() && n >= r.GPUs
}

// helps reports whether stopping victim frees a device of w that a task
// asking r could use.
func helps(w *record.Worker, r *command.Resources, victim *record.Task) bool {
	for _, uuid := range victim.Devices {
		d, ok := fit.DeviceOf(w, uuid)
		if ok && (fit.DeviceFits(d, r) || (r.Shared() && fit.ShareFits(d, r, 0))) {
			return true
		}
	}
	return false
}
