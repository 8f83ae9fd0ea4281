package preemption

import (
	"container/heap"
	"maps"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/sched/fit"
	"github.com/gpulayer/gpulayer/coordinator/sched/place"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
)

// Gangs as preemptors. A gang is admitted whole or not at all, so a
// waiting gang preempts only when, its victims gone, every member has a
// place: the plan takes victims on as many workers as the gang needs,
// one step at a time, each step the fewest victims (in victim order) that
// make room for one more member somewhere (then the lowest worker id),
// until the members' room reaches their number. If it never does,
// nothing is preempted. The devices freed are held for the gang (the
// state holds them: a hold for one member holds for every member).

// gangRoom counts, on w, the members of gang job j (one of them m) that
// could be placed there at now were the tasks of gone not there: its
// free offered devices that fit the members' terms and are held for no
// one else, whole devices per member, within the worker's free slots,
// its max_per_worker and exclusive_worker. A worker that could not run
// the job has none.
func gangRoom(v View, w *record.Worker, j *record.Job, m *record.Task, gone map[string]bool, now time.Time) int {
	r := j.Spec.Resources
	if w.Status != record.WorkerReady || r == nil || r.GPUs == 0 {
		return 0
	}
	whole, shared := place.DeviceUse(w, v.Holding, gone)
	free := 0
	for _, d := range w.Devices {
		_, isShared := shared[d.UUID]
		if !whole[d.UUID] && !isShared && fit.DeviceFits(d, r) && fit.Offered(w, d) && !v.HeldFromOthers(w, []string{d.UUID}, m.ID, now) {
			free++
		}
	}
	n := free / r.GPUs
	if n == 0 || place.CanRun(v, w, j, m, "") != nil { // the dearer test last
		return 0
	}
	if w.MaxTasks > 0 {
		left := 0
		for id := range w.Held() {
			if !gone[id] {
				left++
			}
		}
		n = min(n, max(w.MaxTasks-left, 0))
	} else {
		n = min(n, 1) // one slot, where the agent never said
	}
	if j.Spec.ExclusiveWorker {
		n = min(n, 1)
	}
	if j.Spec.MaxPerWorker > 0 {
		n = min(n, j.Spec.MaxPerWorker)
	}
	return n
}

// GangFits reports whether every member of gang job j (ts, by rank) would
// have a place at now were the tasks of gone not there.
func GangFits(v View, j *record.Job, ts []*record.Task, gone map[string]bool, now time.Time) bool {
	return gangFits(v, v.Workers(), j, ts, gone, now)
}

// gangFits is GangFits over workers.
func gangFits(v View, workers []*record.Worker, j *record.Job, ts []*record.Task, gone map[string]bool, now time.Time) bool {
	room := 0
	for _, w := range workers {
		if room += gangRoom(v, w, j, ts[0], gone, now); room >= len(ts) {
			return true
		}
	}
	return false
}

// gangStep is one step of a gang's plan: the victims on one worker
// (with the rest of their gangs) that make room there for one more
// member.
type gangStep struct {
	w       *record.Worker
	victims []*record.Task
	taken   map[string]int64
	gone    map[string]bool
}

// planGang plans a preemption for gang job j (its pending members ts, by
// rank) at now: orders are each worker's possible victims in victim
// order (computed on first use). Each worker's next step is kept in a
// heap, cheapest first, and checked again against the plan as it stands
// when it comes out (an earlier step may have changed what it can take),
// so a plan costs about one step per worker, not one per worker per
// member.
func planGang(v View, workers []*record.Worker, orders map[string][]*record.Task, j *record.Job, ts []*record.Task, now time.Time, o Options) (command.PreemptTasks, bool) {
	p := ts[0]
	if !gangCouldFit(v, workers, j, len(ts)) {
		return command.PreemptTasks{}, false
	}
	round := NewRound()
	gone := map[string]bool{}
	var victims []*record.Task
	steps := &stepHeap{}
	room, at, total := make([]int, len(workers)), make(map[string]int, len(workers)), 0
	for i, w := range workers {
		at[w.ID] = i
		room[i] = gangRoom(v, w, j, p, gone, now)
		total += room[i]
		if step, ok := gangStepOn(v, w, victimsOf(v, orders, w, o, now), j, p, round, gone, now, o); ok {
			heap.Push(steps, rankedStep{step, i})
		}
	}
	for total < len(ts) {
		if steps.Len() == 0 {
			return command.PreemptTasks{}, false
		}
		top := heap.Pop(steps).(rankedStep)
		step, ok := gangStepOn(v, top.w, victimsOf(v, orders, top.w, o, now), j, p, round, gone, now, o)
		switch {
		case !ok:
			continue
		case len(step.victims) > len(top.victims) && steps.Len() > 0 && len(step.victims) > len(steps.items[0].victims):
			heap.Push(steps, rankedStep{step, top.at}) // dearer now: another may be cheaper
			continue
		}
		round.taken, gone = step.taken, step.gone
		victims = append(victims, step.victims...)
		for _, vt := range step.victims { // the room changes only where victims were
			if i, ok := at[vt.WorkerID]; ok {
				total -= room[i]
				room[i] = gangRoom(v, workers[i], j, p, gone, now)
				total += room[i]
			}
		}
		if next, ok := gangStepOn(v, top.w, victimsOf(v, orders, top.w, o, now), j, p, round, gone, now, o); ok {
			heap.Push(steps, rankedStep{next, top.at})
		}
	}
	if len(victims) == 0 {
		return command.PreemptTasks{}, false
	}
	c := command.PreemptTasks{For: p.ID, WorkerID: victims[0].WorkerID, MinRuntime: o.MinRuntime, Now: now}
	grace := 0
	for _, vt := range victims {
		c.Victims = append(c.Victims, command.Victim{TaskID: vt.ID, AttemptID: vt.AttemptID, WorkerID: vt.WorkerID})
		grace = max(grace, v.Job(vt.JobID).Spec.PreemptionGrace())
	}
	c.HoldUntil = now.Add(time.Duration(grace)*time.Second + o.HoldSlack)
	return c, true
}

// gangCouldFit is a quick bound, before any plan, on whether victims
// could ever make room for n members of gang j: the whole devices free
// now, what other teams borrow (a team is taken from only while over its
// quota, so at most what it borrows and one task more) and what j's own
// team runs at a lower priority, together, must cover the members' GPUs.
func gangCouldFit(v View, workers []*record.Worker, j *record.Job, n int) bool {
	r := j.Spec.Resources
	pTeam := command.TeamOf(j.Team)
	var gpus int64
	largest := map[string]int64{}
	for _, w := range workers {
		gpus += int64(len(v.WorkerView(w).Free))
		for id := range w.Held() {
			t := v.Task(id)
			tj := v.Job(t.JobID)
			team := command.TeamOf(tj.Team)
			switch {
			case !tj.Spec.IsPreemptible():
			case team == pTeam && tj.Spec.Priority < j.Spec.Priority:
				gpus += int64(len(t.Devices))
			case team != pTeam:
				largest[team] = max(largest[team], int64(len(t.Devices)))
			}
		}
	}
	for team, big := range largest {
		if over := v.InUse(team) - quota(v, team); over > 0 {
			gpus += (over+command.CentiGPUsPerGPU-1)/command.CentiGPUsPerGPU + big
		}
	}
	return gpus >= int64(n*r.GPUs)
}

// rankedStep is a worker's next step in the plan's heap; at is the
// worker's place in id order, which breaks ties.
type rankedStep struct {
	gangStep
	at int
}

// stepHeap orders steps by their victims, fewest first, then worker id.
type stepHeap struct{ items []rankedStep }

func (h *stepHeap) Len() int { return len(h.items) }
func (h *stepHeap) Less(a, b int) bool {
	x, y := h.items[a], h.items[b]
	return len(x.victims) < len(y.victims) || (len(x.victims) == len(y.victims) && x.at < y.at)
}
func (h *stepHeap) Swap(a, b int) { h.items[a], h.items[b] = h.items[b], h.items[a] }
func (h *stepHeap) Push(x any)    { h.items = append(h.items, x.(rankedStep)) }
func (h *stepHeap) Pop() any {
	x := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return x
}

// gangStepOn finds, on w, the fewest victims in order (past those the
// plan already took) that raise the room there for the gang's members,
// reading the round and gone as they stand and changing neither.
func gangStepOn(v View, w *record.Worker, order []*record.Task, j *record.Job, p *record.Task, round *Round, gone map[string]bool, now time.Time, o Options) (gangStep, bool) {
	base := gangRoom(v, w, j, p, gone, now)
	step := gangStep{w: w, taken: maps.Clone(round.taken), gone: maps.Clone(gone)}
	trial := &Round{taken: step.taken}
	for _, vt := range order {
		if step.gone[vt.ID] || !helps(w, j.Spec.Resources, vt) || VictimErr(v, p, j, vt, trial, o.MinRuntime, now) != nil {
			continue
		}
		step.victims = append(step.victims, trial.Take(v, step.gone, vt)...)
		if gangRoom(v, w, j, p, step.gone, now) > base {
			return step, true
		}
	}
	return gangStep{}, false
}
