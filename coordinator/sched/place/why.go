package place

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/sched/fit"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
	"github.com/gpulayer/gpulayer/coordinator/state/teams"
)

// WhyView is what the reasons a task waits read: a match's view, the
// worker groups, and the dependencies a job waits for.
type WhyView interface {
	MatchView
	// GroupExists reports whether worker group id exists.
	GroupExists(id string) bool
	// WaitingFor names, for a reason, a dependency j still waits for,
	// or "".
	WaitingFor(j *record.Job) string
}

// Why a task waits. A pending task that no live worker could take, even
// with every GPU free, says what is missing: the target, the executor, the
// capability or the GPUs. A task some live worker could take only waits
// for room and says nothing. This is read on demand (a job's read), from
// the replicated worker registry, so every node gives the same answer; it
// costs one pass over the workers a job could use.

// Why says why no live worker can take a task of j now, or "".
func Why(v WhyView, j *record.Job) string {
	if why := v.WaitingFor(j); why != "" {
		return why
	}
	if v.AtParallelism(j) {
		return fmt.Sprintf("parallelism %d: %d of the job's %d tasks are assigned or running", j.Spec.Parallelism, j.Spec.Parallelism, max(j.Spec.Count, 1))
	}
	spec := j.Spec
	cands, why := liveCandidates(v, spec.Target)
	if len(cands) == 0 {
		return why
	}
	cands = slices.DeleteFunc(cands, func(w *record.Worker) bool { return !slices.Contains(w.Executors, spec.Executor) })
	if len(cands) == 0 {
		return fmt.Sprintf("no live worker%s offers executor %q", where(spec.Target), spec.Executor)
	}
	cands = slices.DeleteFunc(cands, func(w *record.Worker) bool { return !fit.CapabilityAllows(w.Capabilities, "", spec.Capability) })
	if len(cands) == 0 {
		return fmt.Sprintf("capability %q is not offered by any live worker%s that runs executor %q", spec.Capability, where(spec.Target), spec.Executor)
	}
	var broken command.AffinityRule
	cands = slices.DeleteFunc(cands, func(w *record.Worker) bool {
		r, ok := requiredRule(v, w, j.Rules())
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
	if why := takenReason(v, cands, j); why != "" {
		return why
	}
	return queueReason(v, j)
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
func liveCandidates(v WhyView, t *command.Target) ([]*record.Worker, string) {
	var cands []*record.Worker
	switch {
	case t == nil:
		for w := range v.AllWorkers() {
			if w.Status == record.WorkerReady {
				cands = append(cands, w)
			}
		}
		if len(cands) == 0 {
			return nil, "no live worker: " + workerCensus(v)
		}
	case t.Kind == command.TargetWorker:
		w := v.Worker(t.ID)
		switch {
		case w == nil:
			return nil, fmt.Sprintf("target worker %s is not registered", t.ID)
		case w.Status != record.WorkerReady:
			return nil, fmt.Sprintf("target worker %s is %s", t.ID, w.Status)
		}
		cands = []*record.Worker{w}
	case t.Kind == command.TargetGroup:
		if !v.GroupExists(t.ID) {
			return nil, fmt.Sprintf("target group %s does not exist", t.ID)
		}
		members := 0
		for w := range v.AllWorkers() {
			if satisfies(v, w, t) {
				members++
				if w.Status == record.WorkerReady {
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
func workerCensus(v WhyView) string {
	if v.WorkerCount() == 0 {
		return "no worker is registered"
	}
	by := map[string]int{}
	for w := range v.AllWorkers() {
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
	case t.Kind == command.TargetGroup:
		return " in group " + t.ID
	default:
		return " " + t.Kind + " " + t.ID
	}
}

// Why a task waits when some live worker could run it but every one is
// taken by a placement rule: the job runs each task alone
// (exclusive_worker), a worker already runs as many of the job's tasks
// as max_per_worker allows, or a worker runs another job's exclusive
// task. Waiting for GPUs to free up says nothing (the task waits for
// room); these rules are easy to forget, so they are named.

// takenReason says why no worker of cands can take a task of j now
// because of the placement rules above, or "" when one of them is held
// by nothing but room. It reads the workers' active tasks, which are
// replicated, so every node says the same.
func takenReason(v WhyView, cands []*record.Worker, j *record.Job) string {
	spec := j.Spec
	busy, capped, held := 0, 0, 0
	holder := ""
	for _, w := range cands {
		sameJob, other := 0, ""
		for id := range w.Held() {
			t := v.Task(id)
			switch {
			case t.JobID == j.ID:
				sameJob++
			case v.Job(t.JobID).Spec.ExclusiveWorker && (other == "" || t.JobID < other):
				other = t.JobID
			}
		}
		switch {
		case spec.ExclusiveWorker && w.HeldCount() > 0:
			busy++
		case other != "":
			held++
			if holder == "" || other < holder {
				holder = other
			}
		case spec.MaxPerWorker > 0 && sameJob >= spec.MaxPerWorker:
			capped++
		default:
			return ""
		}
	}
	if len(cands) == 0 {
		return ""
	}
	var parts []string
	if busy > 0 {
		parts = append(parts, fmt.Sprintf("%d %s other tasks and it runs alone (--exclusive)", busy, verb(busy, "runs", "run")))
	}
	if held > 0 {
		parts = append(parts, fmt.Sprintf("%d %s an exclusive task of %s", held, verb(held, "runs", "run"), jobNamedFor(v, holder, command.TeamOf(j.Team))))
	}
	if capped > 0 {
		parts = append(parts, fmt.Sprintf("%d already %s %d of its tasks (--max-per-worker %d)", capped, verb(capped, "runs", "run"), spec.MaxPerWorker, spec.MaxPerWorker))
	}
	return fmt.Sprintf("waits for a worker: of the %d live %s that can run it, %s", len(cands), verb(len(cands), "worker", "workers"), strings.Join(parts, "; "))
}

// verb picks the singular or plural form for n.
func verb(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Why a task some live worker could run waits in the queue: its team has
// no room for it (the view's Limits and InUse), another team with less
// than its fair share waits too (share.go), or the GPUs it could use are
// held for the task at the head of the order (the view's Hold). A task that waits
// only for a GPU to free up says nothing. All of it is read from
// replicated data, so every node says the same.

// queueReason is why a task of j waits in the queue, or "".
func queueReason(v WhyView, j *record.Job) string {
	team := command.TeamOf(j.Team)
	if why := v.Limits(team).RoomReason(v.InUse(team), fit.WholeCenti(j.Spec), j.Spec.IsPreemptible()); why != "" {
		return why
	}
	if ahead := teamAhead(v, team); ahead != "" {
		a, me := ShareOf(v, ahead), ShareOf(v, team)
		return fmt.Sprintf("fair share: behind team %s (%s GPUs in use at weight %s; team %s %s at weight %s)",
			ahead, teams.Centi(a.CentiGPUsInUse), teams.Centi(a.WeightCenti), team, teams.Centi(me.CentiGPUsInUse), teams.Centi(me.WeightCenti))
	}
	if h := v.Hold(time.Time{}); h != nil && h.JobID != j.ID {
		return h.Reason(jobNamedFor(v, h.JobID, team))
	}
	return ""
}

// teamAhead is the team with queued tasks it could take now that comes
// first in fair-share order, if it comes before team; else "". A team at
// its ceiling takes nothing from its GPU sub-queues (the matcher passes
// over them), so those do not put it ahead of anyone.
func teamAhead(v WhyView, team string) string {
	first := ""
	for _, sq := range v.Queue().All() {
		sk, list := sq.Key, sq.Tasks
		if len(list) == 0 || sk.Team == team || (first != "" && CompareShare(v, sk.Team, first) >= 0) {
			continue
		}
		if (sk.Size > 0 || sk.Partial) && v.Limits(sk.Team).Full(v.InUse(sk.Team)) {
			continue
		}
		first = sk.Team
	}
	if first == "" || CompareShare(v, first, team) > 0 {
		return ""
	}
	return first
}

// jobNamedFor is how a reason shown to team names job id: by its id
// when it is the team's own, else only by its team, so that a reason
// never tells one team that another's job exists.
func jobNamedFor(v WhyView, id, team string) string {
	if other := command.TeamOf(v.Job(id).Team); other != team {
		return "a job of team " + other
	}
	return "job " + id
}
