package report

import (
	"iter"
	"maps"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/sched/backfill"
	"github.com/gpulayer/gpulayer/coordinator/sched/place"
	"github.com/gpulayer/gpulayer/coordinator/sched/schedtest"
	"github.com/gpulayer/gpulayer/coordinator/state/pending"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
	"github.com/gpulayer/gpulayer/coordinator/state/teams"
)

// fleet is a place.WhyView over records built in a test and a real
// pending index: no groups, holds, dependencies or backfill hold, every
// team unbounded and idle.
type fleet struct {
	workers map[string]*record.Worker
	jobs    map[string]*record.Job
	tasks   map[string]*record.Task
	queue   *pending.Queue
	seq     uint64
}

func newFleet() *fleet {
	return &fleet{workers: map[string]*record.Worker{}, jobs: map[string]*record.Job{}, tasks: map[string]*record.Task{}, queue: pending.New()}
}

// worker adds a ready worker of n 80 GiB GPUs with room for n tasks.
func (f *fleet) worker(id string, n int) *record.Worker {
	w := schedtest.Worker(id, n)
	f.workers[id] = w
	return w
}

// submit queues a one-task job of team asking r at priority.
func (f *fleet) submit(id, team string, r command.Resources, priority int) *record.Task {
	j := &record.Job{ID: id, Team: team, Spec: command.JobSpec{Executor: "exec", Count: 1, Priority: priority, Resources: &r}, TaskIDs: []string{id + "-0"}}
	f.seq++
	t := &record.Task{ID: id + "-0", JobID: id, State: record.TaskPending, Seq: f.seq}
	f.jobs[id], f.tasks[t.ID] = j, t
	f.queue.Push(pending.Key{Executor: "exec", Team: team, Size: r.GPUs, Res: r}, priority, t)
	return t
}

// run starts a one-GPU task on device uuid of w.
func (f *fleet) run(w *record.Worker, uuid string) {
	j := &record.Job{ID: "busy-" + uuid, Spec: command.JobSpec{Executor: "exec", Resources: &command.Resources{GPUs: 1}}}
	t := &record.Task{ID: "on-" + uuid, JobID: j.ID, State: record.TaskRunning, WorkerID: w.ID, Devices: []string{uuid}}
	f.jobs[j.ID], f.tasks[t.ID] = j, t
	w.Hold(t.ID)
}

func (f *fleet) holding(id string) place.Holding {
	t := f.tasks[id]
	return place.Holding{Task: t, Job: f.jobs[t.JobID]}
}

func (f *fleet) WorkerView(w *record.Worker) *place.WorkerView {
	return place.NewWorkerView(w, f.holding, func(string) backfill.End { return backfill.End{} })
}
func (f *fleet) AllWorkers() iter.Seq[*record.Worker]                            { return maps.Values(f.workers) }
func (f *fleet) WorkerCount() int                                                { return len(f.workers) }
func (f *fleet) InGroup(string, string) bool                                     { return false }
func (f *fleet) GroupExists(string) bool                                         { return false }
func (f *fleet) WaitingFor(*record.Job) string                                   { return "" }
func (f *fleet) Worker(id string) *record.Worker                                 { return f.workers[id] }
func (f *fleet) Job(id string) *record.Job                                       { return f.jobs[id] }
func (f *fleet) Task(id string) *record.Task                                     { return f.tasks[id] }
func (f *fleet) Queue() *pending.Queue                                           { return f.queue }
func (f *fleet) TeamOrder() []string                                             { return nil }
func (f *fleet) Targets(*record.Worker) []string                                 { return []string{""} }
func (f *fleet) Hold(time.Time) *backfill.Hold                                   { return nil }
func (f *fleet) AtParallelism(*record.Job) bool                                  { return false }
func (f *fleet) InUse(string) int64                                              { return 0 }
func (f *fleet) Limits(team string) teams.Limits                                 { return teams.Limits{Name: team, Weight: 100} }
func (f *fleet) HeldFromOthers(*record.Worker, []string, string, time.Time) bool { return false }
func (f *fleet) GangOrder(w *record.Worker, others []*record.Worker) []*record.Worker {
	return others
}

var _ place.WhyView = (*fleet)(nil)
