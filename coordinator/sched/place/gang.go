package place

import (
	"slices"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/sched/fit"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
)

// Member places one member of a gang.
type Member struct {
	TaskID   string
	WorkerID string
	Devices  []string
}

// Gang plans gang job j (its members ts, all pending, by rank) from
// worker w, whose acquire asks for up to slots tasks narrowed by
// capability, beside what tent already gives: w takes the first ranks
// it can, then the other ready workers that run the job's executor, in
// GangOrder (nearest w first), each within its free slots (freeSlots).
// false: the fleet cannot take every member now, or w takes none (then
// another worker's acquire will place the gang).
func Gang(v View, w *record.Worker, capability string, slots int, j *record.Job, ts []*record.Task, tent *Tentative) ([]Member, bool) {
	others := make([]*record.Worker, 0, v.WorkerCount())
	for o := range v.AllWorkers() {
		if o != w && o.Status == record.WorkerReady && slices.Contains(o.Executors, j.Spec.Executor) {
			others = append(others, o)
		}
	}
	others = v.GangOrder(w, others)
	var plan []Member
	next := 0
	for i, o := range append([]*record.Worker{w}, others...) {
		narrow, room := "", freeSlots(o)
		if i == 0 {
			narrow, room = capability, slots
		}
		for taken := 0; next < len(ts) && ((room <= 0 && i == 0) || taken < room); taken++ {
			devs, ok := fitsTentatively(v, o, j, ts[next], narrow, tent)
			if !ok {
				break
			}
			tent.Take(o.ID, devs)
			plan = append(plan, Member{TaskID: ts[next].ID, WorkerID: o.ID, Devices: devs})
			next++
		}
		if i == 0 && next == 0 {
			return nil, false // the asking worker takes no member: another's acquire will place the gang
		}
		if next == len(ts) {
			return plan, true
		}
	}
	return nil, false
}

// freeSlots is how many more tasks worker w can run: what its agent said
// it runs at most (Worker.MaxTasks) less what it holds, or one when its
// agent never said.
func freeSlots(w *record.Worker) int {
	if w.MaxTasks <= 0 {
		return 1
	}
	return max(w.MaxTasks-w.HeldCount(), 0)
}

// MemberFits reports whether w may take one more member of gang job j
// beside what tent gave it: exclusive_worker and max_per_worker.
func MemberFits(j *record.Job, w *record.Worker, tent *Tentative) bool {
	n := tent.members(w.ID)
	return !(n > 0 && j.Spec.ExclusiveWorker) && !(j.Spec.MaxPerWorker > 0 && n >= j.Spec.MaxPerWorker)
}

// fitsTentatively reports whether w can run t (of gang job j) beside
// what tent already gave it, and the devices it would get.
func fitsTentatively(v View, w *record.Worker, j *record.Job, t *record.Task, capability string, tent *Tentative) ([]string, bool) {
	if CanRun(v, w, j, t, capability) != nil || !MemberFits(j, w, tent) {
		return nil, false
	}
	r := j.Spec.Resources
	if r == nil || r.GPUs == 0 {
		return nil, true
	}
	var fitting []command.Device
	for _, d := range v.WorkerView(w).Free {
		if !tent.given(d.UUID) && fit.DeviceFits(d, r) && !v.HeldFromOthers(w, []string{d.UUID}, t.ID, time.Time{}) {
			fitting = append(fitting, d)
		}
	}
	if len(fitting) < r.GPUs {
		return nil, false
	}
	return fit.PickConnected(fitting, r.GPUs), true
}

// DevicesFit reports whether devs, devices of w, are as many as r asks,
// each meeting its terms.
func DevicesFit(w *record.Worker, devs []string, r *command.Resources) bool {
	want := 0
	if r != nil {
		want = r.GPUs
	}
	if len(devs) != want {
		return false
	}
	for _, uuid := range devs {
		d, ok := fit.DeviceOf(w, uuid)
		if !ok || !fit.DeviceFits(d, r) {
			return false
		}
	}
	return true
}
