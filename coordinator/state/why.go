package state

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/sched/fit"
)

// Why a task waits. A pending task that no live worker could take, even
// with every GPU free, says what is missing: the target, the executor, the
// capability or the GPUs. A task some live worker could take only waits
// for room and says nothing. This is read on demand (a job's read), from
// the replicated worker registry, so every node gives the same answer; it
// costs one pass over the workers a job could use.

// pendingReason is why no live worker can take a task of j, or "".
func (s *Store) pendingReason(j *Job) string {
	if why := s.waitingFor(j); why != "" { // dependencies.go
		return why
	}
	if why := s.parallelismReason(j); why != "" { // parallelism.go
		return why
	}
	spec := j.Spec
	cands, why := s.liveCandidates(spec.Target)
	if len(cands) == 0 {
		return why
	}
	cands = slices.DeleteFunc(cands, func(w *Worker) bool { return !slices.Contains(w.Executors, spec.Executor) })
	if len(cands) == 0 {
		return fmt.Sprintf("no live worker%s offers executor %q", where(spec.Target), spec.Executor)
	}
	cands = slices.DeleteFunc(cands, func(w *Worker) bool { return !fit.CapabilityAllows(w.Capabilities, "", spec.Capability) })
	if len(cands) == 0 {
		return fmt.Sprintf("capability %q is not offered by any live worker%s that runs executor %q", spec.Capability, where(spec.Target), spec.Executor)
	}
	var broken command.AffinityRule
	cands = slices.DeleteFunc(cands, func(w *Worker) bool {
		r, ok := s.requiredRule(w, j.Rules())
		if ok {
			broken = r
		}
		return ok
	})
	if len(cands) == 0 {
		return "no live worker that can run it meets its required affinity " + describeRule(broken)
	}
	if why := fit.GPUShortfall(cands, spec.Resources); why != "" {
		return why
	}
	if spec.Gang {
		if why := fit.GangShortfall(cands, spec); why != "" {
			return why
		}
	}
	if why := s.takenReason(cands, j); why != "" { // whytaken.go
		return why
	}
	return s.queueReason(j) // queuereason.go
}

// describeRule names a rule's selector for a reason: "label zone=a",
// "not in group g".
func describeRule(r command.AffinityRule) string {
	var sel string
	switch {
	case r.Worker != "":
		sel = "worker " + r.Worker
	case r.Group != "":
		sel = "group " + r.Group
	case r.Value != "":
		sel = "label " + r.Label + "=" + r.Value
	default:
		sel = "label " + r.Label
	}
	if r.Repels() {
		return "(not " + sel + ")"
	}
	return "(" + sel + ")"
}

// liveCandidates lists the ready workers a target allows, or says why
// there are none.
func (s *Store) liveCandidates(t *command.Target) ([]*Worker, string) {
	var cands []*Worker
	switch {
	case t == nil:
		for _, w := range s.workers {
			if w.Status == workerReady {
				cands = append(cands, w)
			}
		}
		if len(cands) == 0 {
			return nil, "no live worker: " + s.workerCensus()
		}
	case t.Kind == targetWorker:
		w, ok := s.workers[t.ID]
		switch {
		case !ok:
			return nil, fmt.Sprintf("target worker %s is not registered", t.ID)
		case w.Status != workerReady:
			return nil, fmt.Sprintf("target worker %s is %s", t.ID, w.Status)
		}
		cands = []*Worker{w}
	case t.Kind == targetGroup:
		if !s.groups.Has(t.ID) {
			return nil, fmt.Sprintf("target group %s does not exist", t.ID)
		}
		members := 0
		for _, w := range s.workers {
			if s.satisfies(w, t) {
				members++
				if w.Status == workerReady {
					cands = append(cands, w)
				}
			}
		}
		if len(cands) == 0 {
			return nil, fmt.Sprintf("target group %s has no live worker (%d members)", t.ID, members)
		}
	}
	// Sorted, so that a reason that names a worker names the same one on
	// every node and at every read.
	sort.Slice(cands, func(i, j int) bool { return cands[i].ID < cands[j].ID })
	return cands, ""
}

// workerCensus counts the workers by status: "3 offline, 1 draining", or
// "no worker is registered".
func (s *Store) workerCensus() string {
	if len(s.workers) == 0 {
		return "no worker is registered"
	}
	by := map[string]int{}
	for _, w := range s.workers {
		by[w.Status]++
	}
	statuses := make([]string, 0, len(by))
	for st := range by {
		statuses = append(statuses, st)
	}
	sort.Strings(statuses)
	parts := make([]string, len(statuses))
	for i, st := range statuses {
		parts[i] = fmt.Sprintf("%d %s", by[st], st)
	}
	return strings.Join(parts, ", ")
}

// where names a target for a reason: " in group g", " (target x)", or "".
func where(t *command.Target) string {
	switch {
	case t == nil:
		return ""
	case t.Kind == targetGroup:
		return " in group " + t.ID
	default:
		return " " + t.Kind + " " + t.ID
	}
}
