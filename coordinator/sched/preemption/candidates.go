package preemption

import (
	"iter"
	"slices"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/sched/place"
	"github.com/gpulayer/gpulayer/coordinator/state/pending"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
)

// CandidateView is what choosing the candidates reads, besides a plan's
// View.
type CandidateView interface {
	View
	// AllWorkers yields every worker, in no order.
	AllWorkers() iter.Seq[*record.Worker]
	// Queue is the pending tasks, by sub-queue.
	Queue() *pending.Queue
	// AtParallelism reports whether j has as many tasks active as its
	// parallelism allows.
	AtParallelism(j *record.Job) bool
	// Waiting reports whether j waits for a dependency.
	Waiting(j *record.Job) bool
	// GangMembers is gang j's tasks, false when one is not pending.
	GangMembers(j *record.Job) ([]*record.Task, bool)
}

// Candidates lists up to n pending tasks that may preempt, highest
// priority then oldest (the queue's order): queued, asking for GPUs,
// held for by no live preemption (it waits for that one's victims; for a
// gang, none of its members), with room under its job's parallelism (a
// gang: waiting for no dependency, every member pending), and of a team
// under its quota or running a task of lower priority (else no task could
// be its victim). It costs the pending and active tasks once, whatever
// the workers.
func Candidates(v CandidateView, now time.Time, n int) []Candidate {
	held := liveHolders(v, now)
	lowest := lowestRunningPriority(v)
	gangs := map[string]bool{} // a gang is one candidate, whatever its size
	var out []*record.Task
	for _, sq := range v.Queue().All() {
		for _, t := range sq.Tasks {
			j := v.Job(t.JobID)
			r := j.Spec.Resources
			if r == nil || r.GPUs == 0 || held[t.ID] || v.AtParallelism(j) {
				continue
			}
			if j.Spec.Gang && (gangs[j.ID] || v.Waiting(j) || gangHeld(j, held)) {
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
	q := v.Queue()
	slices.SortFunc(out, func(a, b *record.Task) int { // the queue's order
		switch {
		case q.Less(a, b):
			return -1
		case q.Less(b, a):
			return 1
		}
		return 0
	})
	cands := make([]Candidate, 0, min(n, len(out)))
	for _, t := range out[:min(n, len(out))] {
		c := Candidate{Task: t, Job: v.Job(t.JobID)}
		if c.Job.Spec.Gang {
			ts, ok := v.GangMembers(c.Job)
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
func gangHeld(j *record.Job, held map[string]bool) bool {
	return slices.ContainsFunc(j.TaskIDs, func(id string) bool { return held[id] })
}

// liveHolders are the tasks a live hold waits for.
func liveHolders(v CandidateView, now time.Time) map[string]bool {
	out := map[string]bool{}
	for w := range v.AllWorkers() {
		for _, h := range w.Holds {
			if place.HoldLive(v, h, now) {
				out[h.TaskID] = true
			}
		}
	}
	return out
}

// lowestRunningPriority is, per team, the lowest priority among its
// active tasks.
func lowestRunningPriority(v CandidateView) map[string]int {
	out := map[string]int{}
	for w := range v.AllWorkers() {
		for id := range w.Held() {
			j := v.Job(v.Task(id).JobID)
			team := command.TeamOf(j.Team)
			if p, ok := out[team]; !ok || j.Spec.Priority < p {
				out[team] = j.Spec.Priority
			}
		}
	}
	return out
}

// HoldsExpired reports whether a hold somewhere is no longer live at
// now: a plan that preempts nothing then still sweeps them.
func HoldsExpired(v CandidateView, now time.Time) bool {
	for w := range v.AllWorkers() {
		for _, h := range w.Holds {
			if !place.HoldLive(v, h, now) {
				return true
			}
		}
	}
	return false
}
