package state

import (
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/command"
)

// A failure its worker says no retry can fix ends the task at once, with
// attempts left; an ordinary failure is retried.
func TestPermanentFailureEndsTheTask(t *testing.T) {
	for _, permanent := range []bool{false, true} {
		s := New()
		mustApply(t, s, register("w1", "GPU-1"), submit("j", 1, 0), // two attempts allowed
			command.AssignTask{TaskID: "j-a", WorkerID: "w1", AttemptID: "a1", Now: at(2)},
			command.FailTask{TaskID: "j-a", WorkerID: "w1", AttemptID: "a1", Reason: "executable file not found", Permanent: permanent, Now: at(3)})
		tk, err := s.Task("j-a")
		if err != nil {
			t.Fatal(err)
		}
		want := taskPending
		if permanent {
			want = taskFailed
		}
		if tk.State != want || len(tk.Attempts) != 1 {
			t.Fatalf("permanent %v: task %s after %d attempts (%s), want %s", permanent, tk.State, len(tk.Attempts), tk.Reason, want)
		}
		if permanent && tk.Reason != "executable file not found (not retried: no attempt can succeed)" {
			t.Fatalf("reason %q", tk.Reason)
		}
	}
}
