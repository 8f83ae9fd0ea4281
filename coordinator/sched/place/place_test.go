package place

import (
	"fmt"
	"iter"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/sched/backfill"
	"github.com/gpulayer/gpulayer/coordinator/sched/schedtest"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
)

// fleet is a View over workers built in a test: each runs the exec
// executor and takes any capability; occupy runs a task on a device.
type fleet struct {
	workers  map[string]*record.Worker
	running  map[string]*record.Task // the tasks occupy started, by id
	occupier *record.Job
	held     map[string]string // device uuid -> the task a hold keeps it for
	names    []string
}

func newFleet() *fleet {
	return &fleet{workers: map[string]*record.Worker{}, running: map[string]*record.Task{}, held: map[string]string{}, names: []string{""},
		occupier: &record.Job{ID: "busy", Spec: command.JobSpec{Executor: "exec", Resources: &command.Resources{GPUs: 1}}}}
}

// occupy runs a one-GPU task on device uuid of w.
func (f *fleet) occupy(w *record.Worker, uuid string) {
	t := &record.Task{ID: "on-" + uuid, JobID: "busy", State: record.TaskRunning, WorkerID: w.ID, Devices: []string{uuid}}
	f.running[t.ID] = t
	w.Hold(t.ID)
}

// worker adds a ready worker of n 80 GiB GPUs, room for slots tasks, on
// switch sw (0: none) of rack rack.
func (f *fleet) worker(id string, n, slots int, sw, rack int32) *record.Worker {
	w := schedtest.Worker(id, n)
	w.MaxTasks = slots
	w.SetTopology(record.Topology{Switch: sw, Rack: rack})
	f.workers[id] = w
	return w
}

func (f *fleet) AllWorkers() iter.Seq[*record.Worker] { return maps.Values(f.workers) }
func (f *fleet) WorkerCount() int                     { return len(f.workers) }

func (f *fleet) InGroup(string, string) bool { return false }

func (f *fleet) WorkerView(w *record.Worker) *WorkerView {
	return NewWorkerView(w, func(id string) Holding { return Holding{Task: f.running[id], Job: f.occupier} }, noEnd)
}

func (f *fleet) HeldFromOthers(w *record.Worker, devs []string, taskID string, _ time.Time) bool {
	for _, d := range devs {
		if by, ok := f.held[d]; ok && by != taskID {
			return true
		}
	}
	return false
}

func (f *fleet) GangOrder(w *record.Worker, others []*record.Worker) []*record.Worker {
	return ByTopology(w, others, f.names)
}

// noEnd: no task of a test fleet has an expected end.
func noEnd(string) backfill.End { return backfill.End{} }

var _ View = (*fleet)(nil)

// gang is a gang job of n members asking gpus each, all pending.
func gang(n, gpus int) (*record.Job, []*record.Task) {
	j := &record.Job{ID: "g", Spec: command.JobSpec{Executor: "exec", Count: n, Gang: true, Resources: &command.Resources{GPUs: gpus}}}
	var ts []*record.Task
	for i := range n {
		ts = append(ts, &record.Task{ID: fmt.Sprintf("g-%d", i), JobID: "g", Index: i, State: record.TaskPending})
	}
	return j, ts
}

func ids(ws []*record.Worker) []string {
	var out []string
	for _, w := range ws {
		out = append(out, w.ID)
	}
	return out
}

// The nearest first: the asker's switch, then its rack's other switches
// (their workers in id order), then the rest; workers that name
// no switch after those that do, in id order.
func TestByTopologyNearestFirst(t *testing.T) {
	f := newFleet()
	f.names = []string{"", "r1", "r2", "s1", "s2", "s3"}
	w := f.worker("w0", 1, 1, 3, 1)
	others := []*record.Worker{
		f.worker("a", 1, 1, 5, 2), // other rack
		f.worker("b", 1, 1, 4, 1), // same rack, switch s2 (1 slot)
		f.worker("c", 1, 4, 0, 1), // same rack, no switch
		f.worker("d", 1, 1, 3, 1), // same switch
		f.worker("e", 1, 1, 0, 0), // no labels
		f.worker("f", 1, 2, 5, 2), // other rack, s3
		f.worker("g", 1, 1, 4, 1), // same rack, s2
	}
	got := ids(ByTopology(w, others, f.names))
	want := []string{"d", "b", "g", "c", "a", "f", "e"}
	if !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
	noLabels := []*record.Worker{f.worker("z", 1, 1, 0, 0), f.worker("y", 1, 1, 0, 0)}
	if got := ids(ByTopology(f.worker("x", 1, 1, 0, 0), noLabels, f.names)); !slices.Equal(got, []string{"y", "z"}) {
		t.Fatalf("with no labels: %v, want id order", got)
	}
}

// The asking worker takes the first ranks it has room for, the others
// the rest within their free slots; a busy or held GPU is no one's.
func TestGangAskerFirstThenTheNearest(t *testing.T) {
	f := newFleet()
	w := f.worker("w1", 2, 4, 1, 0)
	f.worker("w2", 2, 4, 2, 0)
	f.worker("w3", 2, 4, 1, 0) // w1's switch: before w2
	f.names = []string{"", "s1", "s2"}
	f.occupy(w, "GPU-w1-1")
	f.held["GPU-w3-0"] = "other"
	j, ts := gang(3, 1)
	plan, ok := Gang(f, w, "", 1, j, ts, NewTentative())
	want := []Member{
		{TaskID: "g-0", WorkerID: "w1", Devices: []string{"GPU-w1-0"}},
		{TaskID: "g-1", WorkerID: "w3", Devices: []string{"GPU-w3-1"}},
		{TaskID: "g-2", WorkerID: "w2", Devices: []string{"GPU-w2-0"}},
	}
	if !ok || fmt.Sprint(plan) != fmt.Sprint(want) {
		t.Fatalf("plan %v, %v\nwant %v", plan, ok, want)
	}
}

// No plan when the asker takes no member, when the fleet has too little
// room, or beside a tentative that already gave the GPUs away.
func TestGangRefusals(t *testing.T) {
	f := newFleet()
	w := f.worker("w1", 1, 1, 0, 0)
	f.worker("w2", 1, 1, 0, 0)
	j, ts := gang(2, 1)
	f.occupy(w, "GPU-w1-0")
	if plan, ok := Gang(f, w, "", 1, j, ts, NewTentative()); ok {
		t.Fatalf("the asker takes no member, yet %v", plan)
	}
	w.Release("on-GPU-w1-0")
	j3, ts3 := gang(3, 1)
	if plan, ok := Gang(f, w, "", 1, j3, ts3, NewTentative()); ok {
		t.Fatalf("three members on two GPUs: %v", plan)
	}
	tent := NewTentative()
	tent.reserve(slices.Values([]string{"GPU-w2-0"}))
	if plan, ok := Gang(f, w, "", 1, j, ts, tent); ok {
		t.Fatalf("w2's GPU is reserved, yet %v", plan)
	}
	if plan, ok := Gang(f, w, "", 1, j, ts, NewTentative()); !ok || len(plan) != 2 {
		t.Fatalf("two members on two free GPUs: %v, %v", plan, ok)
	}
}

func TestMemberFitsAndDevicesFit(t *testing.T) {
	f := newFleet()
	w := f.worker("w1", 2, 4, 0, 0)
	j, _ := gang(2, 1)
	tent := NewTentative()
	if !MemberFits(j, w, tent) {
		t.Fatal("an empty worker takes a member")
	}
	tent.Take("w1", []string{"GPU-w1-0"})
	if !tent.given("GPU-w1-0") || !tent.AnyGiven([]string{"x", "GPU-w1-0"}) || tent.members("w1") != 1 {
		t.Fatalf("Take did not count: %+v", tent)
	}
	j.Spec.MaxPerWorker = 1
	if MemberFits(j, w, tent) {
		t.Fatal("max_per_worker 1 took a second member")
	}
	j.Spec.MaxPerWorker, j.Spec.ExclusiveWorker = 0, true
	if MemberFits(j, w, tent) {
		t.Fatal("exclusive_worker took a second member")
	}
	r := &command.Resources{GPUs: 1, GPUMemoryMiB: 40000}
	cases := []struct {
		devs []string
		r    *command.Resources
		want bool
	}{
		{[]string{"GPU-w1-0"}, r, true},
		{[]string{"GPU-w1-0", "GPU-w1-1"}, r, false}, // more than asked
		{[]string{"GPU-nope"}, r, false},             // not the worker's
		{[]string{"GPU-w1-0"}, &command.Resources{GPUs: 1, GPUMemoryMiB: 100000}, false},
		{nil, nil, true},
	}
	for _, c := range cases {
		if got := DevicesFit(w, c.devs, c.r); got != c.want {
			t.Errorf("DevicesFit(%v, %+v) = %v, want %v", c.devs, c.r, got, c.want)
		}
	}
	if freeSlots(&record.Worker{}) != 1 || freeSlots(w) != 4 {
		t.Fatalf("freeSlots: %d and %d, want 1 (never said) and 4", freeSlots(&record.Worker{}), freeSlots(w))
	}
}
