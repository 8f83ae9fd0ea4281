package state

import (
	"cmp"
	"slices"
	"sort"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/sched/fit"
)

// PreemptOptions are the leader's preemption settings.
type PreemptOptions struct {
	// MinRuntime is how long an attempt runs before it may be preempted
	// (the storm guard).
	MinRuntime time.Duration
	// HoldSlack is how long, past the longest grace of its victims, the
	// devices a preemption frees stay held for its task.
	HoldSlack time.Duration
	// MaxCandidates bounds the pending tasks one plan considers, highest
	// priority then oldest first.
	MaxCandidates int
}

// Preemption defaults.
const (
	DefaultMinRuntime    = 5 * time.Minute
	DefaultHoldSlack     = time.Minute
	DefaultMaxCandidates = 64
)

func (o PreemptOptions) withDefaults() PreemptOptions {
	if o.MinRuntime < 0 {
		o.MinRuntime = 0
	}
	if o.HoldSlack <= 0 {
		o.HoldSlack = DefaultHoldSlack
	}
	if o.MaxCandidates <= 0 {
		o.MaxCandidates = DefaultMaxCandidates
	}
	return o
}

// PlanPreemption decides, on the leader, one preemption the policy
// (preempt_policy.go) allows at now: the first pending task, highest
// priority then oldest, that no worker can take as things are and that
// would fit on one worker once some of its tasks are stopped; the worker
// where the fewest victims do. A gang member stands for its gang, which
// needs room for every member, on as many workers as it takes
// (preempt_gang.go). It reads the replicated state only; the
// command it returns is checked again where it applies. false: none is
// due. A plan with no For only sweeps holds that have expired.
func (s *Store) PlanPreemption(now time.Time, o PreemptOptions) (command.PreemptTasks, bool) {
	o = o.withDefaults()
	s.mu.RLock()
	defer s.mu.RUnlock()
	workers := s.sortedWorkers()
	usage := s.teamUsage()
	tried := map[string]bool{} // jobs whose task found no plan: its others would not either
	orders := map[string][]*Task{}
	use := map[string]deviceUsage{}
	for _, p := range s.preemptCandidates(now, usage, o.MaxCandidates) {
		pj := s.jobs.Get(p.JobID)
		if tried[pj.ID] {
			continue
		}
		tried[pj.ID] = true
		if pj.Spec.Gang {
			if ts, ok := s.gangTasks(pj); ok && !s.gangFits(workers, pj, ts, nil, now) {
				if c, ok := s.planGangPreemption(workers, orders, pj, ts, usage, now, o); ok {
					return c, true
				}
			}
			continue
		}
		if s.placeableNow(workers, pj, p, use, now, true) {
			continue // an acquire will place it
		}
		var best *command.PreemptTasks
		for _, w := range workers {
			c, ok := s.planOn(w, s.victimsOf(orders, w, o, now), pj, p, usage, now, o)
			if ok && (best == nil || len(c.Victims) < len(best.Victims)) {
				best = &c
			}
		}
		if best != nil {
			return *best, true
		}
	}
	if s.holdsExpired(now) {
		return command.PreemptTasks{MinRuntime: o.MinRuntime, Now: now}, true
	}
	return command.PreemptTasks{}, false
}

// sortedWorkers lists the workers by id.
func (s *Store) sortedWorkers() []*Worker {
	ws := make([]*Worker, 0, len(s.workers))
	for _, w := range s.workers {
		ws = append(ws, w)
	}
	sort.Slice(ws, func(i, j int) bool { return ws[i].ID < ws[j].ID })
	return ws
}

// preemptCandidates lists up to n pending tasks that may preempt, highest
// priority then oldest: queued, asking for GPUs, held for by no live
// preemption (it waits for that one's victims; for a gang, none of its
// members), with room under its job's parallelism (a gang: waiting for
// no dependency), and of a team under its quota or running a task of
// lower priority (else no task could be its victim). It costs
// the pending and active tasks once, whatever the workers.
func (s *Store) preemptCandidates(now time.Time, usage map[string]TeamUsage, n int) []*Task {
	held := s.liveHolders(now)
	lowest := s.lowestRunningPriority()
	gangs := map[string]bool{} // a gang is one candidate, whatever its size
	var out []*Task
	for _, sq := range s.queue.All() {
		for _, t := range sq.Tasks {
			j := s.jobs.Get(t.JobID)
			r := j.Spec.Resources
			if r == nil || r.GPUs == 0 || held[t.ID] || s.checkParallelism(j) != nil {
				continue
			}
			if j.Spec.Gang && (gangs[j.ID] || s.checkNotWaiting(j) != nil || s.gangHeld(j, held)) {
				continue
			}
			team := command.TeamOf(j.Team)
			low, runs := lowest[team]
			if usage[team].CentiGPUsInUse >= s.quotaOf(team) && (!runs || low >= j.Spec.Priority) {
				continue
			}
			if j.Spec.Gang {
				gangs[j.ID] = true
			}
			out = append(out, t)
		}
	}
	slices.SortFunc(out, func(a, b *Task) int {
		return cmp.Or(cmp.Compare(s.priorityOf(b), s.priorityOf(a)), cmp.Compare(a.Seq, b.Seq))
	})
	return out[:min(n, len(out))]
}

// placeableNow reports whether some worker could take p as it is: a
// worker's devices fit it and, with teamRoom, its team has room for it
// (teamroom.go). use, when not nil, keeps each worker's device use
// across the calls of one plan. A task its team's room holds back is not
// placeable, free GPUs or not: only stopping tasks of its own team makes
// the room (planOn). Without teamRoom (a command written before the
// planner counted it: command.PreemptTasks.TeamRoom) the room is not
// judged, as then.
func (s *Store) placeableNow(workers []*Worker, pj *Job, p *Task, use map[string]deviceUsage, now time.Time, teamRoom bool) bool {
	if teamRoom && !s.teamRoomAfter(pj, nil, false) {
		return false
	}
	r := pj.Spec.Resources
	for _, w := range workers {
		u, ok := use[w.ID]
		if !ok {
			u.whole, u.shared = s.deviceUse(w)
			if use != nil {
				use[w.ID] = u
			}
		}
		if (r == nil || r.GPUs == 0 || s.fitsUse(w, r, p.ID, u.whole, u.shared, now)) && s.canRun(w, pj, p, "") == nil {
			return true
		}
	}
	return false
}

// teamRoomAfter reports whether pj's team has room for one of its tasks
// once round's victims have stopped (round nil: as things are). A MIG or
// memory-share task's need depends on the device it gets: the least it
// can be (wholeCenti: a hundredth) says whether the team's room holds it
// back at all, and the most (a whole GPU a device: atMost) whether the
// victims chosen surely make the room, so that a preemption never stops
// a task that does not help.
func (s *Store) teamRoomAfter(pj *Job, round *preemptRound, atMost bool) bool {
	team := command.TeamOf(pj.Team)
	use := s.inuse.inUse(team)
	if round != nil {
		use = round.inUse(team)
	}
	need := fit.WholeCenti(pj.Spec)
	if atMost {
		need = fit.MostCenti(pj.Spec)
	}
	return s.teams.Limits(team).RoomFor(use, need, pj.Spec.IsPreemptible()) == nil
}

// deviceUsage is deviceUse's answer.
type deviceUsage struct {
	whole  map[string]bool
	shared map[string]uint64
}

// planOn chooses victims on w, taken in order (victimOrder), until p
// fits beside the rest; usage is the teams' use as the plan began.
func (s *Store) planOn(w *Worker, order []*Task, pj *Job, p *Task, usage map[string]TeamUsage, now time.Time, o PreemptOptions) (command.PreemptTasks, bool) {
	if len(order) == 0 {
		return command.PreemptTasks{}, false
	}
	round := &preemptRound{usage: usage, taken: map[string]int64{}}
	gone := map[string]bool{}
	c := command.PreemptTasks{For: p.ID, WorkerID: w.ID, MinRuntime: o.MinRuntime, Now: now, TeamRoom: true}
	grace := 0
	team := command.TeamOf(pj.Team)
	// A task its team's room holds back takes its own team's victims
	// first (only they make the room), then, if it still does not fit,
	// any other victim the policy allows: another team's victim taken
	// before the room is made would be stopped for nothing.
	passes := 1
	if !s.teamRoomAfter(pj, round, true) {
		passes = 2
	}
	for pass := range passes {
		for _, v := range order {
			if gone[v.ID] || (passes == 2 && pass == 0 && command.TeamOf(s.jobs.Get(v.JobID).Team) != team) {
				continue
			}
			if !s.helps(w, pj.Spec.Resources, v) || s.victimErr(p, pj, v, round, o.MinRuntime, now) != nil {
				continue
			}
			for _, m := range s.takeGroup(round, gone, v) { // a gang's other members too, wherever they run
				c.Victims = append(c.Victims, victimOn(m, w.ID))
			}
			vj := s.jobs.Get(v.JobID)
			grace = max(grace, vj.Spec.PreemptionGrace())
			if s.fitsBeside(w, pj, p, gone, now) && s.teamRoomAfter(pj, round, true) {
				if s.canRun(w, pj, p, "") != nil {
					return command.PreemptTasks{}, false
				}
				c.HoldUntil = now.Add(time.Duration(grace)*time.Second + o.HoldSlack)
				return c, true
			}
		}
	}
	return command.PreemptTasks{}, false
}

// victimOn names victim v in a command whose worker is def: its own
// worker only where it differs (the form commands had before victims
// named theirs).
func victimOn(v *Task, def string) command.Victim {
	c := command.Victim{TaskID: v.ID, AttemptID: v.AttemptID}
	if v.WorkerID != def {
		c.WorkerID = v.WorkerID
	}
	return c
}

// gangHeld reports whether a live hold waits for a member of gang j.
func (s *Store) gangHeld(j *Job, held map[string]bool) bool {
	for _, id := range j.TaskIDs {
		if held[id] {
			return true
		}
	}
	return false
}

// liveHolders are the tasks a live hold waits for.
func (s *Store) liveHolders(now time.Time) map[string]bool {
	out := map[string]bool{}
	for _, w := range s.workers {
		for _, h := range w.Holds {
			if s.holdLive(h, now) {
				out[h.TaskID] = true
			}
		}
	}
	return out
}

// lowestRunningPriority is, per team, the lowest priority among its
// active tasks.
func (s *Store) lowestRunningPriority() map[string]int {
	out := map[string]int{}
	for _, w := range s.workers {
		for id := range w.Held() {
			j := s.jobs.Get(s.tasks.Get(id).JobID)
			team := command.TeamOf(j.Team)
			if p, ok := out[team]; !ok || j.Spec.Priority < p {
				out[team] = j.Spec.Priority
			}
		}
	}
	return out
}

// holdsExpired reports whether a hold somewhere is no longer live.
func (s *Store) holdsExpired(now time.Time) bool {
	for _, w := range s.workers {
		for _, h := range w.Holds {
			if !s.holdLive(h, now) {
				return true
			}
		}
	}
	return false
}
