package place

import (
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/sched/fit"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
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

// Groups is what targets and affinity rules read of worker groups.
type Groups interface {
	// InGroup reports whether the worker is a member of group, through
	// nested groups too.
	InGroup(workerID, group string) bool
}

// satisfies reports whether worker w may take work for target t (nil:
// any worker may).
func satisfies(g Groups, w *record.Worker, t *command.Target) bool {
	if t == nil {
		return true
	}
	switch t.Kind {
	case command.TargetWorker:
		return t.ID == w.ID
	case command.TargetGroup:
		return g.InGroup(w.ID, t.ID)
	}
	return false
}

// ruleMatches reports whether w is a worker the rule names.
func ruleMatches(g Groups, w *record.Worker, r command.AffinityRule) bool {
	switch {
	case r.Worker != "":
		return w.ID == r.Worker
	case r.Group != "":
		return g.InGroup(w.ID, r.Group)
	default:
		v, ok := w.Labels[r.Label]
		return ok && (r.Value == "" || v == r.Value)
	}
}

// requiredRule returns the first required rule w breaks, if any.
func requiredRule(g Groups, w *record.Worker, rules []command.AffinityRule) (command.AffinityRule, bool) {
	for _, r := range rules {
		if r.Required && ruleMatches(g, w, r) == r.Repels() {
			return r, true
		}
	}
	return command.AffinityRule{}, false
}

// score sums the weights of the soft rules w matches.
func score(g Groups, w *record.Worker, rules []command.AffinityRule) int {
	total := 0
	for _, r := range rules {
		if !r.Required && ruleMatches(g, w, r) {
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
func runningOf(v MatchView, w *record.Worker, job string) int {
	n := 0
	for id := range w.Held() {
		if v.Task(id).JobID == job {
			n++
		}
	}
	return n
}

// eligible reports whether w, live, could take a task of j with every
// GPU free: status, executor, capability, target, required rules, GPUs.
func eligible(g Groups, w *record.Worker, j *record.Job) bool {
	spec := j.Spec
	if w.Status != record.WorkerReady || !fit.CapabilityAllows(w.Capabilities, "", spec.Capability) || !satisfies(g, w, spec.Target) {
		return false
	}
	if _, broken := requiredRule(g, w, j.Rules()); broken {
		return false
	}
	executor := false
	for _, e := range w.Executors {
		executor = executor || e == spec.Executor
	}
	return executor && fit.GPUShortfall([]*record.Worker{w}, spec.Resources) == ""
}

// deferral reports whether w should leave t to a live worker that suits
// it better, and until when (at most AffinityWait after t became
// pending). A zero now never defers.
func deferral(v MatchView, w *record.Worker, j *record.Job, t *record.Task, now time.Time) (time.Time, bool) {
	soft := hasSoft(j.Rules())
	if now.IsZero() || (!soft && !j.Spec.Spread) {
		return time.Time{}, false
	}
	until := t.UpdatedAt.Add(AffinityWait)
	if !now.Before(until) {
		return time.Time{}, false
	}
	mine, load := score(v, w, j.Rules()), runningOf(v, w, j.ID)
	for o := range v.AllWorkers() {
		if o == w || !eligible(v, o, j) {
			continue
		}
		if soft && score(v, o, j.Rules()) > mine {
			return until, true
		}
		if j.Spec.Spread && runningOf(v, o, j.ID) < load {
			return until, true
		}
	}
	return time.Time{}, false
}
