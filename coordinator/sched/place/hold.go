package place

import (
	"iter"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/sched/backfill"
	"github.com/gpulayer/gpulayer/coordinator/sched/fit"
	"github.com/gpulayer/gpulayer/coordinator/state/pending"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
)

// The backfill hold. A pending gang or multi-GPU task at the head of the
// order (Head: the top task of the first team in fair-share order with
// room for it) holds the GPUs it needs as they free up: the devices that
// fit it and free earliest, estimated from the running tasks'
// timeout_seconds (a free device first, then by estimated end, worker id
// and device order), so every leader holds the same ones. Another task
// may take a held GPU only when its own timeout_seconds ends before the
// last held GPU is expected free; one without a timeout, or any while an
// estimate is unknown (a holder runs without a timeout), may not. The
// hold is a function of the replicated state alone, read by the matcher
// only: it is a leader's choice among assignments the state machine would
// all accept.

// HoldView is what choosing the hold reads of the replicated state.
type HoldView interface {
	Fleet
	Shares
	// AllWorkers yields every worker, in no order.
	AllWorkers() iter.Seq[*record.Worker]
	// Worker is the worker of that id, or nil.
	Worker(id string) *record.Worker
	// Job is the job of that id, or nil.
	Job(id string) *record.Job
	// Queue is the pending tasks, by sub-queue.
	Queue() *pending.Queue
}

// TeamRoom is nil when j's team has room for need more hundredths of a
// GPU (its quota, or its borrow limit where j may be preempted): the
// state machine's check of an assignment, and the head's.
func TeamRoom(v Shares, j *record.Job, need int64) error {
	team := command.TeamOf(j.Team)
	return v.Limits(team).RoomFor(v.InUse(team), need, j.Spec.IsPreemptible())
}

// Head is the first task of the order whose team has room for it: each
// team's top queued task, teams in fair-share order; nil when none has.
func Head(v HoldView) *record.Task {
	type top struct {
		t    *record.Task
		prio int
	}
	tops := map[string]top{}
	for _, sq := range v.Queue().All() {
		t := sq.Tasks[0]
		if cur, ok := tops[sq.Key.Team]; !ok || sq.Prio > cur.prio || (sq.Prio == cur.prio && t.Seq < cur.t.Seq) {
			tops[sq.Key.Team] = top{t, sq.Prio} // pending.Queue.Less, its first task's priority kept
		}
	}
	teams := make([]string, 0, len(tops))
	for team := range tops {
		teams = append(teams, team)
	}
	for _, team := range ByShare(v, teams) {
		t := tops[team].t
		j := v.Job(t.JobID)
		if TeamRoom(v, j, fit.WholeCenti(j.Spec)) == nil {
			return t
		}
	}
	return nil
}

// Hold is the hold of head t, or nil when there is none, it is not
// large, or the fleet could not hold it even as tasks end. It reads the
// workers' slots through bases where it is given one and t's job has no
// affinity rules (whose slots are its own), and afresh otherwise.
func Hold(v HoldView, t *record.Task, bases *Bases) *backfill.Hold {
	if t == nil {
		return nil
	}
	j := v.Job(t.JobID)
	if !backfill.Large(j.Spec) {
		return nil
	}
	need, per := 1, j.Spec.Resources.GPUs
	if j.Spec.Gang {
		need = j.Spec.Count
	}
	var chosen []backfill.Slot
	if bases == nil || len(j.Rules()) > 0 {
		var lists [][]backfill.Slot
		for w := range v.AllWorkers() {
			if l := HoldSlots(v, w, j, per); len(l) > 0 {
				lists = append(lists, l)
			}
		}
		chosen = backfill.First(lists, need)
	} else {
		chosen = bases.Choice(v, j, per, need)
	}
	if chosen == nil {
		return nil
	}
	return backfill.Of(j.ID, need*per, chosen)
}

// PickFor picks the devices on w for task t of j, leaving out the GPUs
// the backfill hold h keeps unless j may backfill them. A task a
// preemption freed GPUs for on w (HoldsFor) is not held back by the head:
// the preemption already chose it, and its GPUs would otherwise sit idle
// between the two holds.
func PickFor(v MatchView, w *record.Worker, j *record.Job, t *record.Task, h *backfill.Hold, now time.Time) ([]string, bool) {
	if h.Spares(j, now) || HoldsFor(v, w, t.ID, now) {
		return PickDevices(v, w, j.Spec.Resources, nil)
	}
	return PickDevices(v, w, j.Spec.Resources, h.Devices)
}
