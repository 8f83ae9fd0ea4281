package state

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/command"
)

// A job of 6 tasks with parallelism 2, over three workers of one GPU
// each: placement hands out two, passes over the rest (the third worker
// matches nothing of the job), a direct assignment past the bound is
// refused, and each end lets one more in. The waiting tasks say why.
func TestParallelismCap(t *testing.T) {
	s := New()
	j := submit("p", 6, 1)
	j.Spec.Parallelism = 2
	mustApply(t, s, register("w1", "GPU-1"), register("w2", "GPU-2"), register("w3", "GPU-3"), j)
	place := func(w string, n int) string {
		t.Helper()
		c, ok, err := s.Match(w, "", nil)
		if err != nil || !ok {
			return ""
		}
		mustApply(t, s, command.AssignTask{TaskID: c.TaskID, WorkerID: w, AttemptID: fmt.Sprintf("att-%d", n), Devices: c.Devices, Now: at(2)})
		return c.TaskID
	}
	if place("w1", 1) == "" || place("w2", 2) == "" {
		t.Fatal("the first two tasks were not placed")
	}
	if got := place("w3", 3); got != "" {
		t.Fatalf("a third task %s was placed past parallelism 2", got)
	}
	if err := s.Apply(command.AssignTask{TaskID: "p-c", WorkerID: "w3", AttemptID: "att-x", Devices: []string{"GPU-3"}, Now: at(2)}).(Result).Err(); !errors.Is(err, ErrConflict) {
		t.Fatalf("assignment past the bound: %v, want a conflict", err)
	}
	rec, _ := s.Job("p")
	if !strings.Contains(rec.PendingReason, "parallelism 2") {
		t.Fatalf("pending reason %q does not name the parallelism", rec.PendingReason)
	}
	active := 0
	for n := 4; ; n++ {
		running := []Task{}
		rec, _ = s.Job("p")
		for _, tk := range rec.Tasks {
			if tk.Active() {
				running = append(running, tk)
			}
		}
		if len(running) > 2 {
			t.Fatalf("%d tasks active at once", len(running))
		}
		active = max(active, len(running))
		if len(running) == 0 {
			break
		}
		done := running[0]
		mustApply(t, s, command.FinishTask{TaskID: done.ID, WorkerID: done.WorkerID, AttemptID: done.AttemptID, Now: at(3)})
		for i, w := range []string{"w1", "w2", "w3"} {
			place(w, n*10+i)
		}
	}
	rec, _ = s.Job("p")
	for _, tk := range rec.Tasks {
		if tk.State != taskSucceeded {
			t.Fatalf("task %s ended %s", tk.ID, tk.State)
		}
	}
	if active != 2 {
		t.Fatalf("at most %d tasks ran at once, want 2", active)
	}
}

// A job without parallelism is not bounded, and its pending tasks carry
// no parallelism reason.
func TestNoParallelismNoBound(t *testing.T) {
	s := New()
	mustApply(t, s, register("w1", "GPU-1"), register("w2", "GPU-2"), submit("p", 3, 1))
	for i, w := range []string{"w1", "w2"} {
		c, ok, _ := s.Match(w, "", nil)
		if !ok {
			t.Fatalf("%s matched nothing", w)
		}
		mustApply(t, s, command.AssignTask{TaskID: c.TaskID, WorkerID: w, AttemptID: fmt.Sprint("a", i), Devices: c.Devices, Now: at(2)})
	}
	if rec, _ := s.Job("p"); strings.Contains(rec.PendingReason, "parallelism") {
		t.Fatalf("pending reason %q", rec.PendingReason)
	}
}

// A bounded job's backlog costs placement nothing: with a job of 1,000
// tasks at its bound of 2, a match for another job's task looks at no
// more than a few pending tasks, and each end lets the next oldest in.
func TestParallelismBacklogIsNotScanned(t *testing.T) {
	s := New()
	big := submit("big", 1000, 0)
	big.Spec.Parallelism, big.Spec.Priority = 2, 5
	mustApply(t, s, register("w1"), big, submit("other", 1, 0))
	for i, id := range []string{"big-a", "big-b"} {
		got, _ := examined(t, s, "w1", "")
		if got != id {
			t.Fatalf("match %d: %s, want %s", i, got, id)
		}
		mustApply(t, s, command.AssignTask{TaskID: id, WorkerID: "w1", AttemptID: "a" + id, Now: at(2)})
	}
	got, n := examined(t, s, "w1", "")
	if got != "other-a" || n > 3 {
		t.Fatalf("at the bound: matched %q after looking at %d tasks, want other-a after at most 3", got, n)
	}
	mustApply(t, s, command.FinishTask{TaskID: "big-a", WorkerID: "w1", AttemptID: "abig-a", Now: at(3)})
	if got, _ := examined(t, s, "w1", ""); got != "big-c" {
		t.Fatalf("after an end: matched %q, want the next oldest, big-c", got)
	}
	// A restored store fits the same window.
	r, _ := roundTrip(t, s)
	if got, n := examined(t, r, "w1", ""); got != "big-c" || n > 3 {
		t.Fatalf("restored: matched %q after %d, want big-c", got, n)
	}
}
