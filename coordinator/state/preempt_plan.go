package state

import (
	"slices"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/sched/preemption"
)

// PlanPreemption decides, on the leader, one preemption the policy
// (package preemption) allows at now, for the first of the pending
// tasks that may preempt (preemptCandidates) that needs one and for
// which one would do. It reads the replicated state only; the command
// it returns is checked again where it applies. false: none is due. A
// plan with no For only sweeps holds that have expired.
func (s *Store) PlanPreemption(now time.Time, o preemption.Options) (command.PreemptTasks, bool) {
	o = o.WithDefaults()
	s.mu.RLock()
	defer s.mu.RUnlock()
	if c, ok := preemption.Plan(s.planView(), s.preemptCandidates(now, o.MaxCandidates), now, o); ok {
		return c, true
	}
	if s.holdsExpired(now) {
		return command.PreemptTasks{MinRuntime: o.MinRuntime, Now: now}, true
	}
	return command.PreemptTasks{}, false
}

// preemptCandidates lists up to n pending tasks that may preempt, highest
// priority then oldest: queued, asking for GPUs, held for by no live
// preemption (it waits for that one's victims; for a gang, none of its
// members), with room under its job's parallelism (a gang: waiting for
// no dependency, every member pending), and of a team under its quota or
// running a task of lower priority (else no task could be its victim).
// It costs the pending and active tasks once, whatever the workers.
func (s *Store) preemptCandidates(now time.Time, n int) []preemption.Candidate {
	held := s.liveHolders(now)
	lowest := s.lowestRunningPriority()
	v := s.planView()
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
			if v.InUse(team) >= v.Limits(team).Quota && (!runs || low >= j.Spec.Priority) {
				continue
			}
			if j.Spec.Gang {
				gangs[j.ID] = true
			}
			out = append(out, t)
		}
	}
	slices.SortFunc(out, func(a, b *Task) int { // the queue's order
		switch {
		case s.queue.Less(a, b):
			return -1
		case s.queue.Less(b, a):
			return 1
		}
		return 0
	})
	cands := make([]preemption.Candidate, 0, min(n, len(out)))
	for _, t := range out[:min(n, len(out))] {
		c := preemption.Candidate{Task: t, Job: s.jobs.Get(t.JobID)}
		if c.Job.Spec.Gang {
			ts, ok := s.gangTasks(c.Job)
			if !ok {
				continue // a member has left the queue: no plan for it now
			}
			c.Gang = ts
		}
		cands = append(cands, c)
	}
	return cands
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
