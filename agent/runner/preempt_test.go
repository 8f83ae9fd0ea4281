package runner

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A preempted attempt is stopped with its job's preemption grace, not
// the agent's stop grace (1 s here): a task that takes 2 s to save its
// state after SIGTERM saves it within a grace of 5 s, and is killed
// before it can with none.
func TestPreemptGivesTheJobsGrace(t *testing.T) {
	const script = `trap 'sleep 2; echo saved; exit 143' TERM; echo up; while :; do sleep 0.1; done`
	cases := []struct {
		name  string
		grace int
		saved bool
	}{
		{"grace of 5 s", 5, true},
		{"no grace", 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, rec, _ := newRunner(t, nil)
			a := shellTask(t, script, nil, filepath.Join(t.TempDir(), "unused"))
			a.PreemptionGraceSeconds = c.grace
			done := make(chan Outcome, 1)
			go func() { done <- r.Run(context.Background(), a) }()
			waitOutput(t, rec, a.ID, "up")
			if !r.Preempt(a.AttemptID) {
				t.Fatal("the running attempt was not found")
			}
			select {
			case <-done:
			case <-time.After(60 * time.Second):
				t.Fatal("the attempt did not end")
			}
			stdout, _, _ := rec.out(a.ID)
			if got := strings.Contains(stdout, "saved"); got != c.saved {
				t.Fatalf("saved = %v, want %v (stdout %q)", got, c.saved, stdout)
			}
		})
	}
}
