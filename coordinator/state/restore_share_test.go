package state

import (
	"testing"
	"unsafe"

	"github.com/gpulayer/gpulayer/coordinator/command"
)

// same reports whether two strings share their bytes.
func same(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }

// A restore leaves one copy of each string that several records hold:
// the tables snapshot to the same bytes (roundTrip), and the task's job
// and worker ids, its state, a spec's hash and Config are shared.
func TestRestoreSharesStrings(t *testing.T) {
	s := New()
	for _, c := range scenario() {
		s.Apply(c)
	}
	mustApply(t, s, submit("j3", 1, 0), submit("j4", 1, 0))
	r, _ := roundTrip(t, s)

	j1, j3, j4 := r.jobs.Get("j1"), r.jobs.Get("j3"), r.jobs.Get("j4")
	ta, tb := r.tasks.Get("j1-a"), r.tasks.Get("j1-b")
	w1 := r.workers["w1"]
	checks := []struct {
		name string
		ok   bool
	}{
		{"a task's job id is its job's", same(ta.JobID, j1.ID)},
		{"a job's task ids are its tasks'", same(j1.TaskIDs[0], ta.ID) && same(j1.TaskIDs[1], tb.ID)},
		{"a task's worker id is its worker's", same(tb.WorkerID, w1.ID)},
		{"an attempt's worker id is its worker's", same(ta.Attempts[0].WorkerID, w1.ID)},
		{"the current attempt's id is the task's", same(tb.Attempts[len(tb.Attempts)-1].ID, tb.AttemptID)},
		{"equal specs share their hash", same(j3.SpecHash, j4.SpecHash)},
		{"equal specs share their Config", unsafe.SliceData(j3.Spec.Config) == unsafe.SliceData(j4.Spec.Config)},
		{"equal states are one string", same(r.tasks.Get("j3-a").State, r.tasks.Get("j4-a").State)},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("%s: not shared after a restore", c.name)
		}
	}
	if j3.SpecHash != j4.SpecHash || string(j3.Spec.Config) != `{"command":"true"}` {
		t.Fatalf("shared values changed: %q %q %s", j3.SpecHash, j4.SpecHash, j3.Spec.Config)
	}
	// The store goes on as before: a command changes one task, not its
	// neighbours that share strings with it.
	mustApply(t, r, command.CancelJob{JobID: "j3", By: "admin", Now: at(200)})
	if r.tasks.Get("j4-a").State != taskPending || r.tasks.Get("j3-a").State != taskCancelled {
		t.Fatalf("after cancelling j3: j3-a %s, j4-a %s", r.tasks.Get("j3-a").State, r.tasks.Get("j4-a").State)
	}
}
