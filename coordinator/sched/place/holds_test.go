package place

import (
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/state/record"
)

// A hold keeps its device from every task but its own and its gang's,
// while its task waits and its bound has not passed; a zero now reads it
// until it is released.
func TestHoldsAreReadAgainstTheCommandsTime(t *testing.T) {
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	q := newQueued()
	w := q.worker("w1", 2, 2, 0, 0)
	q.submit("p", "ml", 1, 0)
	g := q.submit("g", "ml", 1, 0)
	q.jobs["g"].Spec.Gang = true
	q.jobs["g"].TaskIDs = append(q.jobs["g"].TaskIDs, "g-1")
	q.tasks["g-1"] = &record.Task{ID: "g-1", JobID: "g", State: record.TaskPending}
	w.Holds = []record.DeviceHold{
		{Device: "GPU-w1-0", TaskID: "p-0", Until: now.Add(time.Minute)},
		{Device: "GPU-w1-1", TaskID: g.ID, Until: now.Add(time.Minute)},
	}
	cases := []struct {
		name   string
		devs   []string
		task   string
		at     time.Time
		others bool // HeldFromOthers
	}{
		{"held for another task", []string{"GPU-w1-0"}, "x-0", now, true},
		{"held for this task", []string{"GPU-w1-0"}, "p-0", now, false},
		{"held for a member of its gang", []string{"GPU-w1-1"}, "g-1", now, false},
		{"a gang's hold keeps others off", []string{"GPU-w1-1"}, "p-0", now, true},
		{"past its bound", []string{"GPU-w1-0"}, "x-0", now.Add(time.Minute), false},
		{"no time: until released", []string{"GPU-w1-0"}, "x-0", time.Time{}, true},
		{"a device not held", []string{"GPU-w1-9"}, "x-0", now, false},
	}
	for _, c := range cases {
		if got := HeldFromOthers(q, w, c.devs, c.task, c.at); got != c.others {
			t.Errorf("%s: HeldFromOthers %v, want %v", c.name, got, c.others)
		}
	}
	q.jobs["p"].TaskIDs = append(q.jobs["p"].TaskIDs, "p-1") // p is no gang: its hold is p-0's alone
	q.tasks["p-1"] = &record.Task{ID: "p-1", JobID: "p", State: record.TaskPending}
	if !HeldFromOthers(q, w, []string{"GPU-w1-0"}, "p-1", now) {
		t.Fatal("a hold for a task of a job that is no gang held for its sibling")
	}
	if !HoldsFor(q, w, "p-0", now) || HoldsFor(q, w, "g-1", now) {
		t.Fatal("HoldsFor: p-0 is held for, g-1 (whose gang's hold names g-0) is not")
	}
	q.tasks["p-0"].State = record.TaskAssigned
	if HoldsFor(q, w, "p-0", now) || HeldFromOthers(q, w, []string{"GPU-w1-0"}, "x-0", now) {
		t.Fatal("a hold whose task was placed still holds")
	}
}
