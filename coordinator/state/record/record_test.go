package record

import (
	"reflect"
	"slices"
	"testing"
	"time"
	"unsafe"

	"github.com/gpulayer/gpulayer/coordinator/command"
)

// TestRecordSizeClasses holds the large tables' records to the allocation size
// classes their layouts were chosen for: a field added in the wrong place
// (or a flag that breaks the last word) moves a record to a larger class,
// which costs every retained job the difference.
func TestRecordSizeClasses(t *testing.T) {
	for _, c := range []struct {
		name string
		size uintptr
		max  uintptr
	}{
		{"Task", unsafe.Sizeof(Task{}), 384},
		{"Job", unsafe.Sizeof(Job{}), 448},
		{"Attempt", unsafe.Sizeof(Attempt{}), 240},
	} {
		if c.size > c.max {
			t.Errorf("%s is %d bytes, over its %d-byte size class", c.name, c.size, c.max)
		}
	}
}

func filledTask() *Task {
	code := 3
	return &Task{
		ID: "t", JobID: "j", State: TaskFailed, Devices: []string{"GPU-a"}, ExitCode: &code,
		Output: []byte(`{"ok":false}`), Artifacts: []command.TaskArtifact{{Path: "out"}},
		Checkpoint: &TaskCheckpoint{SHA256: "ab", Size: 1, Format: "file", AttemptID: "a1"},
		Attempts: []Attempt{{
			ID: "a1", State: TaskFailed, Devices: []string{"GPU-a"}, ExitCode: &code,
			Rendezvous: &Endpoint{Address: "10.0.0.1", Port: 29500},
		}},
		UpdatedAt: time.Unix(100, 0),
	}
}

// TestTaskCloneSharesNothing changes everything a clone points to and
// finds the original as it was.
func TestTaskCloneSharesNothing(t *testing.T) {
	orig := filledTask()
	orig.Stamp(7)
	orig.Freeze()
	want := filledTask()

	c := orig.Clone()
	if c.Gen() != 0 || c.Frozen() {
		t.Fatalf("a clone keeps the write stamp: gen %d, frozen %v", c.Gen(), c.Frozen())
	}
	c.Devices[0] = "GPU-x"
	*c.ExitCode = 9
	c.Output[2] = 'X'
	c.Artifacts[0].Path = "changed"
	c.Checkpoint.SHA256 = "changed"
	c.Attempts[0].Devices[0] = "GPU-x"
	*c.Attempts[0].ExitCode = 9
	c.Attempts[0].Rendezvous.Port = 1
	c.Attempts[0].State = TaskSucceeded

	orig.Stamp(0) // the stamp is not compared by SameState; clear it for DeepEqual
	if !reflect.DeepEqual(orig, want) {
		t.Fatalf("changing the clone changed the original:\n got %+v\nwant %+v", orig, want)
	}
}

// TestSameStateIgnoresTheStampOnly: two records of one state differ only
// in their stamps; any field of the state tells them apart.
func TestSameStateIgnoresTheStampOnly(t *testing.T) {
	a, b := filledTask(), filledTask()
	a.Stamp(3)
	b.Stamp(9)
	b.Freeze()
	if !a.SameState(b) {
		t.Fatal("records differing only in their stamps are not the same state")
	}
	for name, change := range map[string]func(*Task){
		"state":      func(x *Task) { x.State = TaskSucceeded },
		"updated_at": func(x *Task) { x.UpdatedAt = x.UpdatedAt.Add(time.Second) },
		"attempts":   func(x *Task) { x.Attempts = append(x.Attempts, Attempt{ID: "a2"}) },
		"reason":     func(x *Task) { x.Reason = "other" },
		"log_bytes":  func(x *Task) { x.LogBytes = 1 },
	} {
		c := filledTask()
		change(c)
		if a.SameState(c) {
			t.Errorf("%s changed, yet the records are the same state", name)
		}
	}
}

func TestAttemptsUsed(t *testing.T) {
	lost := func(gpu string) Attempt { return Attempt{State: AttemptLost, GPUFault: gpu} }
	for _, c := range []struct {
		name     string
		attempts []Attempt
		want     int
	}{
		{"none", nil, 0},
		{"failed ones count", []Attempt{{State: TaskFailed}, {State: TaskFailed}}, 2},
		{"preempted ones do not", []Attempt{{State: AttemptPreempted}, {State: TaskFailed}}, 1},
		{"lost without a fault counts", []Attempt{lost("")}, 1},
		{"faults are free up to the bound", []Attempt{lost("g"), lost("g"), lost("g")}, 0},
		{"past the bound they count", []Attempt{lost("g"), lost("g"), lost("g"), lost("g"), lost("g")}, 2},
	} {
		task := Task{Attempts: c.attempts}
		if got := task.AttemptsUsed(); got != c.want {
			t.Errorf("%s: %d used, want %d", c.name, got, c.want)
		}
	}
}

func TestOwnCurrentLeavesTheSharedArray(t *testing.T) {
	var empty Task
	if empty.Current() != nil || empty.OwnCurrent() != nil {
		t.Fatal("a task with no attempt has a current one")
	}
	orig := filledTask()
	shared := orig.Attempts
	orig.OwnCurrent().Reason = "changed"
	if shared[0].Reason != "" || orig.Current().Reason != "changed" {
		t.Fatalf("OwnCurrent changed the shared array (%q) or not the task's (%q)", shared[0].Reason, orig.Current().Reason)
	}
}

func TestWorkerHeldSet(t *testing.T) {
	var w Worker
	if w.HeldCount() != 0 {
		t.Fatal("a new worker holds tasks")
	}
	w.Hold("a")
	w.Hold("b")
	w.Hold("a")
	w.Release("b")
	w.Release("never held")
	if got := slices.Collect(w.Held()); !slices.Equal(got, []string{"a"}) || w.HeldCount() != 1 {
		t.Fatalf("held %v (%d), want [a]", got, w.HeldCount())
	}
	c := w.Clone()
	c.Hold("c")
	if slices.Contains(slices.Collect(w.Held()), "c") || slices.Contains(slices.Collect(c.Held()), "a") {
		t.Fatal("a clone shares the held set")
	}
	w.DropHeld()
	if w.HeldCount() != 0 {
		t.Fatal("DropHeld kept tasks")
	}
}

// TestWorkerCloneSharesNothing changes everything a clone points to and
// finds the original as it was.
func TestWorkerCloneSharesNothing(t *testing.T) {
	fill := func() *Worker {
		w := &Worker{
			ID: "w", Labels: map[string]string{"rack": "r1"}, Capabilities: []string{"gpu"}, Executors: []string{"exec"},
			Devices: []command.Device{{UUID: "GPU-a"}}, ClearGPUs: []string{"GPU-a"},
			LastAcquire:     &LastAcquire{RequestID: "r", More: []TaskAttempt{{TaskID: "t"}}},
			ApprovedDevices: map[string]uint64{"GPU-a": 80}, ApprovedIdentity: map[string]string{"GPU-a": "x"},
			Cordons: map[string]string{"GPU-a": "bad"}, Holds: []DeviceHold{{Device: "GPU-a"}},
			MIGLayouts: []MIGLayout{{UUID: "GPU-a", Layout: []string{"1g.10gb"}}},
		}
		w.SetTopology(Topology{Domain: 1, Switch: 2, Rack: 3})
		return w
	}
	orig, want := fill(), fill()
	c := orig.Clone()
	if c.Topology() != orig.Topology() {
		t.Fatal("a clone lost the topology")
	}
	c.Labels["rack"] = "x"
	c.Capabilities[0] = "x"
	c.Executors[0] = "x"
	c.Devices[0].UUID = "x"
	c.ClearGPUs[0] = "x"
	c.LastAcquire.More[0].TaskID = "x"
	c.ApprovedDevices["GPU-a"] = 1
	c.ApprovedIdentity["GPU-a"] = "y"
	c.Cordons["GPU-a"] = "y"
	c.Holds[0].Device = "x"
	c.MIGLayouts[0].Layout[0] = "x"
	if !reflect.DeepEqual(orig, want) {
		t.Fatalf("changing the clone changed the original:\n got %+v\nwant %+v", orig, want)
	}
}

func TestLastAcquireWithLeavesTheOriginal(t *testing.T) {
	rec := &LastAcquire{RequestID: "r", More: make([]TaskAttempt, 1, 4)}
	more := rec.With(TaskAttempt{TaskID: "t2"})
	if len(rec.More) != 1 || len(more.More) != 2 || more.More[1].TaskID != "t2" {
		t.Fatalf("With: original %v, copy %v", rec.More, more.More)
	}
	// The original's spare capacity is not written through.
	again := rec.With(TaskAttempt{TaskID: "t3"})
	if more.More[1].TaskID != "t2" || again.More[1].TaskID != "t3" {
		t.Fatalf("two copies share an array: %v, %v", more.More, again.More)
	}
}

func TestJobRules(t *testing.T) {
	var j Job
	if j.Rules() != nil {
		t.Fatal("a new job has rules")
	}
	rules := []command.AffinityRule{{Label: "rack", Value: "r1"}}
	j.SetRules(rules)
	c := j // copies share the parsed rules
	if !slices.Equal(c.Rules(), rules) {
		t.Fatalf("rules %v, want %v", c.Rules(), rules)
	}
	j.SetRules(nil)
	if j.Rules() != nil || c.Rules() == nil {
		t.Fatal("SetRules(nil) kept the rules, or changed a copy's")
	}
}
