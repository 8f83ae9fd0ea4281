package state

import (
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/sched/fit"
)

// Affinity and spread. A job's required rules filter workers as its
// target does, in the state machine, so no replica ever assigns against
// them. Its soft rules and its spread only order the leader's choice, by
// delay scheduling: a worker that asks for work passes over a task that
// another live worker would suit better (a higher affinity score, or
// fewer of the job's tasks already, for spread) for at most AffinityWait
// after the task became pending, and takes other work meanwhile; past
// that wait any worker that can run the task takes it. The placement
// index is unchanged: the check runs only on the candidate a worker's
// sub-queues yield, and costs one pass over the workers.

// AffinityWait is how long a task with soft affinity or spread waits for
// the worker that suits it best before any other that can run it takes it.
const AffinityWait = 5 * time.Second

// rulesOf reads a job's affinity rules. A job stored before the rules'
// shape was checked at submit may hold something else: it has none.
func rulesOf(spec command.JobSpec) []command.AffinityRule {
	rules, err := command.ParseAffinity(spec)
	if err != nil {
		return nil
	}
	return rules
}

// ruleMatches reports whether w is a worker the rule names.
func (s *Store) ruleMatches(w *Worker, r command.AffinityRule) bool {
	switch {
	case r.Worker != "":
		return w.ID == r.Worker
	case r.Group != "":
		return s.groups.Contains(w.ID, r.Group)
	default:
		v, ok := w.Labels[r.Label]
		return ok && (r.Value == "" || v == r.Value)
	}
}

// requiredRule returns the first required rule w breaks, if any.
func (s *Store) requiredRule(w *Worker, rules []command.AffinityRule) (command.AffinityRule, bool) {
	for _, r := range rules {
		if r.Required && s.ruleMatches(w, r) == r.Repels() {
			return r, true
		}
	}
	return command.AffinityRule{}, false
}

// score sums the weights of the soft rules w matches.
func (s *Store) score(w *Worker, rules []command.AffinityRule) int {
	total := 0
	for _, r := range rules {
		if !r.Required && s.ruleMatches(w, r) {
			total += r.Weight
		}
	}
	return total
}

func hasSoft(rules []command.AffinityRule) bool {
	for _, r := range rules {
		if !r.Required {
			return true
		}
	}
	return false
}

// runningOf counts the tasks of job that w holds.
func (s *Store) runningOf(w *Worker, job string) int {
	n := 0
	for id := range w.Held() {
		if s.tasks.Get(id).JobID == job {
			n++
		}
	}
	return n
}

// eligible reports whether w, live, could take a task of j with every
// GPU free: status, executor, capability, target, required rules, GPUs.
func (s *Store) eligible(w *Worker, j *Job) bool {
	spec := j.Spec
	if w.Status != workerReady || !fit.CapabilityAllows(w.Capabilities, "", spec.Capability) || !s.satisfies(w, spec.Target) {
		return false
	}
	if _, broken := s.requiredRule(w, j.Rules()); broken {
		return false
	}
	executor := false
	for _, e := range w.Executors {
		executor = executor || e == spec.Executor
	}
	return executor && fit.GPUShortfall([]*Worker{w}, spec.Resources) == ""
}

// deferral reports whether w should leave t to a live worker that suits
// it better, and until when (at most AffinityWait after t became
// pending). A zero now never defers.
func (s *Store) deferral(w *Worker, j *Job, t *Task, now time.Time) (time.Time, bool) {
	soft := hasSoft(j.Rules())
	if now.IsZero() || (!soft && !j.Spec.Spread) {
		return time.Time{}, false
	}
	until := t.UpdatedAt.Add(AffinityWait)
	if !now.Before(until) {
		return time.Time{}, false
	}
	mine, load := s.score(w, j.Rules()), s.runningOf(w, j.ID)
	for _, o := range s.workers {
		if o == w || !s.eligible(o, j) {
			continue
		}
		if soft && s.score(o, j.Rules()) > mine {
			return until, true
		}
		if j.Spec.Spread && s.runningOf(o, j.ID) < load {
			return until, true
		}
	}
	return time.Time{}, false
}
