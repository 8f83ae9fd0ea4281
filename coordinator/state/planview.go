package state

import (
	"iter"
	"maps"
	"slices"
	"sort"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/sched/backfill"
	"github.com/gpulayer/gpulayer/coordinator/sched/place"
	"github.com/gpulayer/gpulayer/coordinator/sched/preemption"
	"github.com/gpulayer/gpulayer/coordinator/state/deps"
	"github.com/gpulayer/gpulayer/coordinator/state/pending"
	"github.com/gpulayer/gpulayer/coordinator/state/teams"
)

// planView is the store as placement's plans read it (packages place
// and preemption): the caller holds the store's lock (the read lock to
// plan, the write lock as a command applies) for as long as the view is
// used.
type planView struct{ s *Store }

var (
	_ preemption.View          = planView{}
	_ place.WhyView            = planView{}
	_ preemption.CandidateView = planView{}
)

func (s *Store) planView() planView { return planView{s} }

// Workers lists the workers by id.
func (v planView) Workers() []*Worker {
	ws := make([]*Worker, 0, len(v.s.workers))
	for _, w := range v.s.workers {
		ws = append(ws, w)
	}
	sort.Slice(ws, func(i, j int) bool { return ws[i].ID < ws[j].ID })
	return ws
}

func (v planView) Worker(id string) *Worker { return v.s.workers[id] }
func (v planView) Job(id string) *Job       { return v.s.jobs.Get(id) }
func (v planView) Task(id string) *Task     { return v.s.tasks.Get(id) }

// AllWorkers yields the workers in no order.
func (v planView) AllWorkers() iter.Seq[*Worker] { return maps.Values(v.s.workers) }
func (v planView) WorkerCount() int              { return len(v.s.workers) }

func (v planView) GangOrder(w *Worker, others []*Worker) []*Worker { return gangOrder(v.s, w, others) }

func (v planView) WorkerView(w *Worker) *place.WorkerView { return v.s.derived.View(w, v.s.buildView) }

func (v planView) Holding(taskID string) place.Holding { return v.s.holding(taskID) }

func (v planView) HeldFromOthers(w *Worker, devs []string, taskID string, now time.Time) bool {
	return place.HeldFromOthers(v, w, devs, taskID, now)
}

func (v planView) InUse(team string) int64 { return v.s.inuse.inUse(team) }

func (v planView) Queue() *pending.Queue { return v.s.queue }

// TeamOrder lists the teams with queued sub-queues, lowest share first,
// sorted once a state version: a match reads the teams in that order and
// stops at the first with a task that fits (place.Match).
func (v planView) TeamOrder() []string {
	return v.s.derived.TeamOrder(v.s.version, func() []string { return place.ByShare(v, slices.Collect(v.s.queue.Teams())) })
}

func (v planView) Targets(w *Worker) []string { return v.s.targetsOf(w) }

// Hold is the backfill hold of the current state version: the head's
// (place.Head) GPUs as place.Hold chooses them, a function of the
// replicated state alone, so a replica restored from a snapshot and one
// that replayed the log hold the same GPUs.
func (v planView) Hold(time.Time) *backfill.Hold {
	return v.s.derived.Hold(v.s.version, func(bases *place.Bases) *backfill.Hold { return place.Hold(v, place.Head(v), bases) })
}

func (v planView) AtParallelism(j *Job) bool { return deps.AtParallelism(depTables(v), j) }

func (v planView) InGroup(workerID, group string) bool { return v.s.groups.Contains(workerID, group) }
func (v planView) GroupExists(id string) bool          { return v.s.groups.Has(id) }
func (v planView) Limits(team string) teams.Limits     { return v.s.teams.Limits(team) }
func (v planView) WaitingFor(j *Job) string            { return v.s.deps.WaitingFor(depTables(v), j) }
func (v planView) Waiting(j *Job) bool                 { return v.s.deps.Unmet(j.ID) > 0 }

func (v planView) GangMembers(j *Job) ([]*Task, bool) { return v.s.gangTasks(j) }
