package preemption

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/sched/backfill"
	"github.com/gpulayer/gpulayer/coordinator/sched/place"
	"github.com/gpulayer/gpulayer/coordinator/sched/schedtest"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
	"github.com/gpulayer/gpulayer/coordinator/state/teams"
)

var t0 = time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)

// fleet is a View over records built in a test: what it says of use and
// room it derives from them, as the store does from its tables.
type fleet struct {
	workers map[string]*record.Worker
	jobs    map[string]*record.Job
	tasks   map[string]*record.Task
	quota   map[string]int64
	ceiling map[string]int64  // a team's most hundredths in use; none: no bound
	held    map[string]string // device uuid -> the task a hold keeps it for
}

func newFleet() *fleet {
	return &fleet{workers: map[string]*record.Worker{}, jobs: map[string]*record.Job{}, tasks: map[string]*record.Task{},
		quota: map[string]int64{}, ceiling: map[string]int64{}, held: map[string]string{}}
}

// worker adds a ready worker with n healthy 80 GiB GPUs and room for as
// many tasks.
func (f *fleet) worker(id string, n int) *record.Worker {
	w := schedtest.Worker(id, n)
	f.workers[id] = w
	return w
}

// job adds a job of team asking gpus a task, at priority, and its count
// tasks, pending.
func (f *fleet) job(id, team string, gpus, priority, count int) *record.Job {
	j := &record.Job{ID: id, Team: team, Spec: command.JobSpec{Executor: "exec", Count: count, Priority: priority,
		Resources: &command.Resources{GPUs: gpus}, Gang: count > 1}}
	for i := range count {
		t := &record.Task{ID: fmt.Sprintf("%s-%d", id, i), JobID: id, Index: i, State: record.TaskPending}
		j.TaskIDs = append(j.TaskIDs, t.ID)
		f.tasks[t.ID] = t
	}
	f.jobs[id] = j
	return j
}

// run places task id on worker w's devices idx, running since started.
func (f *fleet) run(id string, w *record.Worker, started time.Time, idx ...int) *record.Task {
	t := f.tasks[id]
	t.State, t.WorkerID, t.AttemptID = record.TaskRunning, w.ID, "att-"+id
	t.Devices = nil
	for _, i := range idx {
		t.Devices = append(t.Devices, w.Devices[i].UUID)
	}
	t.Attempts = []record.Attempt{{ID: t.AttemptID, WorkerID: w.ID, AssignedAt: started, StartedAt: started}}
	w.Hold(id)
	return t
}

// busy adds job id of team, one task at priority, running on w's
// devices devs since t0.
func (f *fleet) busy(w *record.Worker, id, team string, priority int, devs ...int) *record.Task {
	f.job(id, team, len(devs), priority, 1)
	return f.run(id+"-0", w, t0, devs...)
}

func (f *fleet) Workers() []*record.Worker {
	var ws []*record.Worker
	for _, w := range f.workers {
		ws = append(ws, w)
	}
	slices.SortFunc(ws, func(a, b *record.Worker) int { return strings.Compare(a.ID, b.ID) })
	return ws
}
func (f *fleet) Worker(id string) *record.Worker { return f.workers[id] }
func (f *fleet) Job(id string) *record.Job       { return f.jobs[id] }
func (f *fleet) Task(id string) *record.Task     { return f.tasks[id] }

func (f *fleet) InGroup(string, string) bool { return false }

func (f *fleet) WorkerView(w *record.Worker) *place.WorkerView {
	return place.NewWorkerView(w, f.Holding, func(string) backfill.End { return backfill.End{} })
}

func (f *fleet) Holding(taskID string) place.Holding {
	t := f.tasks[taskID]
	return place.Holding{Task: t, Job: f.jobs[t.JobID]}
}

func (f *fleet) HeldFromOthers(w *record.Worker, devs []string, taskID string, now time.Time) bool {
	for _, d := range devs {
		if by, ok := f.held[d]; ok && by != taskID {
			return true
		}
	}
	return false
}

func (f *fleet) InUse(team string) int64 {
	var n int64
	for _, t := range f.tasks {
		if t.Active() && command.TeamOf(f.jobs[t.JobID].Team) == team {
			n += int64(len(t.Devices)) * command.CentiGPUsPerGPU
		}
	}
	return n
}

// Limits gives a team its quota and, where the test set one, a ceiling.
func (f *fleet) Limits(team string) teams.Limits {
	most, bounded := f.ceiling[team]
	return teams.Limits{Name: team, Quota: f.quota[team], Ceiling: most, Bounded: bounded, Weight: teams.DefaultWeightCenti}
}

var _ View = (*fleet)(nil)
