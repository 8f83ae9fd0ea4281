package preemption

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/sched/fit"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
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
	w := &record.Worker{ID: id, Status: record.WorkerReady, MaxTasks: n, Executors: []string{"exec"}}
	for i := range n {
		w.Devices = append(w.Devices, command.Device{Index: i, UUID: fmt.Sprintf("GPU-%s-%d", id, i), Name: "H100", MemoryMiB: 81920, Healthy: true})
	}
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

func (f *fleet) CanRun(w *record.Worker, j *record.Job, t *record.Task, _ string) error {
	if w.Status != record.WorkerReady || !slices.Contains(w.Executors, j.Spec.Executor) {
		return fmt.Errorf("worker %s cannot run %s", w.ID, t.ID)
	}
	return nil
}

func (f *fleet) DeviceUse(w *record.Worker, gone map[string]bool) (map[string]bool, map[string]uint64) {
	whole, shared := map[string]bool{}, map[string]uint64{}
	for id := range w.Held() {
		if gone[id] {
			continue
		}
		for _, d := range f.tasks[id].Devices {
			whole[d] = true
		}
	}
	return whole, shared
}

func (f *fleet) FreeDevices(w *record.Worker) []command.Device {
	whole, _ := f.DeviceUse(w, nil)
	var out []command.Device
	for _, d := range w.Devices {
		if !whole[d.UUID] && fit.Offered(w, d) {
			out = append(out, d)
		}
	}
	return out
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

func (f *fleet) Quota(team string) int64 { return f.quota[team] }

func (f *fleet) RoomFor(team string, use, need int64, preemptible bool) bool {
	most, ok := f.ceiling[team]
	return !ok || use+need <= most
}

var _ View = (*fleet)(nil)
