package state

import (
	"maps"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
)

// Gangs as preemptors. A gang is admitted whole or not at all, so a
// waiting gang preempts only when, its victims gone, every member has a
// place: the plan takes victims on as many workers as the gang needs,
// one step at a time, each step the fewest victims (in victim order) that
// make room for one more member somewhere (then the lowest worker id),
// until the members' room reaches their number. If it never does,
// nothing is preempted. The devices freed are held for the gang (a hold
// for one member holds for every member: sameHolder).

// gangRoom counts, on w, the members of gang job j (one of them m) that
// could be placed there at now were the tasks of gone not there: its
// free offered devices that fit the members' terms and are held for no
// one else, whole devices per member, within the worker's free slots,
// its max_per_worker and exclusive_worker. A worker that could not run
// the job has none.
func (s *Store) gangRoom(w *Worker, j *Job, m *Task, gone map[string]bool, now time.Time) int {
	r := j.Spec.Resources
	if w.Status != workerReady || r == nil || r.GPUs == 0 || s.canRun(w, j, m, "") != nil {
		return 0
	}
	whole, shared := s.deviceUseBeside(w, gone)
	free := 0
	for _, d := range w.Devices {
		_, isShared := shared[d.UUID]
		if !whole[d.UUID] && !isShared && deviceFits(d, r) && offered(w, d) && !s.heldFromOthers(w, []string{d.UUID}, m.ID, now) {
			free++
		}
	}
	n := free / r.GPUs
	if w.MaxTasks > 0 {
		left := 0
		for id := range w.active {
			if !gone[id] {
				left++
			}
		}
		n = min(n, max(w.MaxTasks-left, 0))
	} else {
		n = min(n, 1) // freeSlots: one, where the agent never said
	}
	if j.Spec.ExclusiveWorker {
		n = min(n, 1)
	}
	if j.Spec.MaxPerWorker > 0 {
		n = min(n, j.Spec.MaxPerWorker)
	}
	return n
}

// gangFits reports whether every member of the gang (ts, by rank) would
// have a place at now were the tasks of gone not there.
func (s *Store) gangFits(workers []*Worker, j *Job, ts []*Task, gone map[string]bool, now time.Time) bool {
	room := 0
	for _, w := range workers {
		if room += s.gangRoom(w, j, ts[0], gone, now); room >= len(ts) {
			return true
		}
	}
	return false
}

// gangStep is one step of a gang's plan: the victims on one worker
// (with the rest of their gangs) that make room there for one more
// member.
type gangStep struct {
	w       *Worker
	victims []*Task
	taken   map[string]int64
	gone    map[string]bool
}

// planGangPreemption plans a preemption for gang job j (its pending
// members ts, by rank) at now: orders are each worker's possible victims
// in victim order (computed on first use).
func (s *Store) planGangPreemption(workers []*Worker, orders map[string][]*Task, j *Job, ts []*Task, usage map[string]TeamUsage, now time.Time, o PreemptOptions) (command.PreemptTasks, bool) {
	p := ts[0]
	round := &preemptRound{usage: usage, taken: map[string]int64{}}
	gone := map[string]bool{}
	var victims []*Task
	for !s.gangFits(workers, j, ts, gone, now) {
		var best *gangStep
		for _, w := range workers {
			step, ok := s.gangStepOn(w, s.victimsOf(orders, w, o, now), j, p, round, gone, now, o)
			if ok && (best == nil || len(step.victims) < len(best.victims)) {
				best = &step
			}
		}
		if best == nil {
			return command.PreemptTasks{}, false
		}
		round.taken, gone = best.taken, best.gone
		victims = append(victims, best.victims...)
	}
	if len(victims) == 0 {
		return command.PreemptTasks{}, false
	}
	c := command.PreemptTasks{For: p.ID, WorkerID: victims[0].WorkerID, MinRuntime: o.MinRuntime, Now: now}
	grace := 0
	for _, v := range victims {
		c.Victims = append(c.Victims, command.Victim{TaskID: v.ID, AttemptID: v.AttemptID, WorkerID: v.WorkerID})
		grace = max(grace, s.jobs.get(v.JobID).Spec.PreemptionGrace())
	}
	c.HoldUntil = now.Add(time.Duration(grace)*time.Second + o.HoldSlack)
	return c, true
}

// victimsOf is w's possible victims of any task, in victim order.
func (s *Store) victimsOf(orders map[string][]*Task, w *Worker, o PreemptOptions, now time.Time) []*Task {
	order, ok := orders[w.ID]
	if !ok {
		order = s.victimOrder(w)
		kept := order[:0]
		for _, v := range order {
			if s.victimBaseErr(v, o.MinRuntime, now) == nil {
				kept = append(kept, v)
			}
		}
		order = kept
		orders[w.ID] = order
	}
	return order
}

// gangStepOn finds, on w, the fewest victims in order (past those the
// plan already took) that raise the room there for the gang's members,
// reading the round and gone as they stand and changing neither.
func (s *Store) gangStepOn(w *Worker, order []*Task, j *Job, p *Task, round *preemptRound, gone map[string]bool, now time.Time, o PreemptOptions) (gangStep, bool) {
	base := s.gangRoom(w, j, p, gone, now)
	step := gangStep{w: w, taken: maps.Clone(round.taken), gone: maps.Clone(gone)}
	trial := &preemptRound{usage: round.usage, taken: step.taken}
	for _, v := range order {
		if step.gone[v.ID] || !s.helps(w, j.Spec.Resources, v) || s.victimErr(p, j, v, trial, o.MinRuntime, now) != nil {
			continue
		}
		step.victims = append(step.victims, s.takeGroup(trial, step.gone, v)...)
		if s.gangRoom(w, j, p, step.gone, now) > base {
			return step, true
		}
	}
	return gangStep{}, false
}
