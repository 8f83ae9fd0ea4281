package state

import (
	"cmp"
	"slices"
	"sort"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
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
// where the fewest victims do. It reads the replicated state only; the
// command it returns is checked again where it applies. false: none is
// due. A plan with no For only sweeps holds that have expired.
func (s *Store) PlanPreemption(now time.Time, o PreemptOptions) (command.PreemptTasks, bool) {
	o = o.withDefaults()
	s.mu.RLock()
	defer s.mu.RUnlock()
	workers := s.sortedWorkers()
	for _, p := range s.preemptCandidates(now, o.MaxCandidates) {
		pj := s.jobs.get(p.JobID)
		if s.placeableNow(workers, pj, p, now) {
			continue // an acquire will place it
		}
		var best *command.PreemptTasks
		for _, w := range workers {
			c, ok := s.planOn(w, pj, p, now, o)
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
// priority then oldest: queued, not of a gang, asking for GPUs, held for
// by no live preemption (it waits for that one's victims), and with room
// under its job's parallelism.
func (s *Store) preemptCandidates(now time.Time, n int) []*Task {
	var out []*Task
	for _, byCap := range s.queue.lists {
		for _, list := range byCap {
			for _, t := range list {
				j := s.jobs.get(t.JobID)
				r := j.Spec.Resources
				if j.Spec.Gang || r == nil || r.GPUs == 0 || s.checkParallelism(j) != nil || s.heldFor(t.ID, now) {
					continue
				}
				out = append(out, t)
			}
		}
	}
	slices.SortFunc(out, func(a, b *Task) int {
		return cmp.Or(cmp.Compare(s.queue.prio[b.ID], s.queue.prio[a.ID]), cmp.Compare(a.Seq, b.Seq))
	})
	return out[:min(n, len(out))]
}

// placeableNow reports whether some worker could take p as it is.
func (s *Store) placeableNow(workers []*Worker, pj *Job, p *Task, now time.Time) bool {
	for _, w := range workers {
		if s.canRun(w, pj, p, "") == nil && s.fitsBeside(w, pj, p, nil, now) {
			return true
		}
	}
	return false
}

// planOn chooses victims on w, in victim order, until p fits beside the
// rest.
func (s *Store) planOn(w *Worker, pj *Job, p *Task, now time.Time, o PreemptOptions) (command.PreemptTasks, bool) {
	if s.canRun(w, pj, p, "") != nil {
		return command.PreemptTasks{}, false
	}
	round := s.newPreemptRound()
	gone := map[string]bool{}
	c := command.PreemptTasks{For: p.ID, WorkerID: w.ID, MinRuntime: o.MinRuntime, Now: now}
	grace := 0
	for _, v := range s.victimOrder(w) {
		if !s.helps(w, pj.Spec.Resources, v) || s.victimErr(p, pj, v, round, o.MinRuntime, now) != nil {
			continue
		}
		s.take(round, w, v)
		gone[v.ID] = true
		c.Victims = append(c.Victims, command.Victim{TaskID: v.ID, AttemptID: v.AttemptID})
		vj := s.jobs.get(v.JobID)
		grace = max(grace, vj.Spec.PreemptionGrace())
		if s.fitsBeside(w, pj, p, gone, now) {
			c.HoldUntil = now.Add(time.Duration(grace)*time.Second + o.HoldSlack)
			return c, true
		}
	}
	return command.PreemptTasks{}, false
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
