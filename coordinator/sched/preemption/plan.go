package preemption

import (
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/sched/place"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
)

// Candidate is a pending task a plan may preempt for: its job and, for a
// gang, every member, all pending, by rank (Gang[0] stands for it).
type Candidate struct {
	Task *record.Task
	Job  *record.Job
	Gang []*record.Task
}

// Plan decides one preemption the policy allows at now: the first of
// cands (the caller's order: highest priority, then oldest) that no
// worker can take as things are and that would fit on one worker once
// some of its tasks are stopped, on the worker where the fewest victims
// do. A gang needs room for every member, on as many workers as it
// takes (gang.go). false: none.
func Plan(v View, cands []Candidate, now time.Time, o Options) (command.PreemptTasks, bool) {
	o = o.WithDefaults()
	workers := v.Workers()
	tried := map[string]bool{} // jobs whose task found no plan: its others would not either
	orders := map[string][]*record.Task{}
	use := map[string]deviceUsage{}
	for _, cand := range cands {
		p, pj := cand.Task, cand.Job
		if tried[pj.ID] {
			continue
		}
		tried[pj.ID] = true
		if pj.Spec.Gang {
			if len(cand.Gang) > 0 && !gangFits(v, workers, pj, cand.Gang, nil, now) {
				if c, ok := planGang(v, workers, orders, pj, cand.Gang, now, o); ok {
					return c, true
				}
			}
			continue
		}
		if placeableNow(v, workers, pj, p, use, now, true) {
			continue // an acquire will place it
		}
		var best *command.PreemptTasks
		for _, w := range workers {
			c, ok := planOn(v, w, victimsOf(v, orders, w, o, now), pj, p, now, o)
			if ok && (best == nil || len(c.Victims) < len(best.Victims)) {
				best = &c
			}
		}
		if best != nil {
			return *best, true
		}
	}
	return command.PreemptTasks{}, false
}

// planOn chooses victims on w, taken in order (victimOrder), until p
// fits beside the rest.
func planOn(v View, w *record.Worker, order []*record.Task, pj *record.Job, p *record.Task, now time.Time, o Options) (command.PreemptTasks, bool) {
	if len(order) == 0 {
		return command.PreemptTasks{}, false
	}
	round := NewRound()
	gone := map[string]bool{}
	c := command.PreemptTasks{For: p.ID, WorkerID: w.ID, MinRuntime: o.MinRuntime, Now: now, TeamRoom: true}
	grace := 0
	team := command.TeamOf(pj.Team)
	// A task its team's room holds back takes its own team's victims
	// first (only they make the room), then, if it still does not fit,
	// any other victim the policy allows: another team's victim taken
	// before the room is made would be stopped for nothing.
	passes := 1
	if !teamRoomAfter(v, pj, round, true) {
		passes = 2
	}
	for pass := range passes {
		for _, vt := range order {
			if gone[vt.ID] || (passes == 2 && pass == 0 && command.TeamOf(v.Job(vt.JobID).Team) != team) {
				continue
			}
			if !helps(w, pj.Spec.Resources, vt) || VictimErr(v, p, pj, vt, round, o.MinRuntime, now) != nil {
				continue
			}
			for _, m := range round.Take(v, gone, vt) { // a gang's other members too, wherever they run
				c.Victims = append(c.Victims, victimOn(m, w.ID))
			}
			grace = max(grace, v.Job(vt.JobID).Spec.PreemptionGrace())
			if FitsBeside(v, w, pj, p, gone, now) && teamRoomAfter(v, pj, round, true) {
				if place.CanRun(v, w, pj, p, "") != nil {
					return command.PreemptTasks{}, false
				}
				c.HoldUntil = now.Add(time.Duration(grace)*time.Second + o.HoldSlack)
				return c, true
			}
		}
	}
	return command.PreemptTasks{}, false
}

// victimOn names victim m in a command whose worker is def: its own
// worker only where it differs (the form commands had before victims
// named theirs).
func victimOn(m *record.Task, def string) command.Victim {
	c := command.Victim{TaskID: m.ID, AttemptID: m.AttemptID}
	if m.WorkerID != def {
		c.WorkerID = m.WorkerID
	}
	return c
}

// victimsOf is w's possible victims of any task, in victim order, those
// the policy rules out whatever the preemptor left out; orders keeps
// each worker's across one plan.
func victimsOf(v View, orders map[string][]*record.Task, w *record.Worker, o Options, now time.Time) []*record.Task {
	order, ok := orders[w.ID]
	if !ok {
		order = victimOrder(v, w)
		kept := order[:0]
		for _, vt := range order {
			if victimBaseErr(v, vt, o.MinRuntime, now) == nil {
				kept = append(kept, vt)
			}
		}
		order = kept
		orders[w.ID] = order
	}
	return order
}
