package state

import (
	"bytes"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/command"
)

// A remembered finish holds the task as that finish left it. The finish
// that ends a task shares the table's record instead of a copy; the
// record is frozen, so a command that changes the task later changes a
// copy, and every replay, also after a restore, answers the first outcome.
func TestRememberedFinishKeepsItsOutcome(t *testing.T) {
	// As in production: no capture between the commands, so nothing but
	// the frozen mark makes ownTask copy the record a finish holds.
	checkOwnership = false
	t.Cleanup(func() { checkOwnership = true })
	s := New()
	// The first attempt is stopped (its worker told to stop), so its
	// finish requeues the task rather than ending it.
	first := command.FinishTask{TaskID: "j1-a", WorkerID: "w1", AttemptID: "a1", SubmissionID: "s1", BodyHash: "b1", ExitCode: 143, Now: at(3)}
	for _, c := range []command.Command{
		register("w1"), submit("j1", 1, 0),
		command.AssignTask{TaskID: "j1-a", WorkerID: "w1", AttemptID: "a1", Now: at(1)},
		command.StartTask{TaskID: "j1-a", WorkerID: "w1", AttemptID: "a1", Now: at(2)},
		command.ControlWorker{WorkerID: "w1", Action: command.ActionStop, By: "admin", Now: at(2)},
	} {
		if err := s.Apply(c).(Result).Err(); err != nil {
			t.Fatalf("%T: %v", c, err)
		}
	}
	replay := func(s *Store, c command.FinishTask, what string) Task {
		t.Helper()
		out, err := OutcomeOf[Task](s.Apply(c).(Result))
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return out
	}
	failed := replay(s, first, "the first finish")
	if failed.State != taskPending || len(failed.Attempts) != 1 {
		t.Fatalf("after a stopped attempt: %+v", failed)
	}
	var early bytes.Buffer
	if err := s.Snapshot(&early); err != nil {
		t.Fatal(err)
	}
	// The task moves on: a second attempt, which succeeds.
	for _, c := range []command.Command{
		command.ControlWorker{WorkerID: "w1", Action: command.ActionResume, By: "admin", Now: at(4)},
		command.AssignTask{TaskID: "j1-a", WorkerID: "w1", AttemptID: "a2", Now: at(4)},
		command.StartTask{TaskID: "j1-a", WorkerID: "w1", AttemptID: "a2", Now: at(5)},
	} {
		if err := s.Apply(c).(Result).Err(); err != nil {
			t.Fatalf("%T: %v", c, err)
		}
	}
	second := command.FinishTask{TaskID: "j1-a", WorkerID: "w1", AttemptID: "a2", SubmissionID: "s2", BodyHash: "b2", Now: at(6)}
	succeeded := replay(s, second, "the second finish")
	if succeeded.State != taskSucceeded || len(succeeded.Attempts) != 2 {
		t.Fatalf("after the second attempt: %+v", succeeded)
	}
	if s.submissions.Get("j1-a/s2").Task != s.tasks.Get("j1-a") {
		t.Error("the finish that ended the task holds a copy, not the table's record")
	}

	var snap bytes.Buffer
	if err := s.Snapshot(&snap); err != nil {
		t.Fatal(err)
	}
	r := New()
	if err := r.Restore(bytes.NewReader(snap.Bytes())); err != nil {
		t.Fatal(err)
	}
	if r.submissions.Get("j1-a/s2").Task != r.tasks.Get("j1-a") || r.submissions.Get("j1-a/s1").Task == r.tasks.Get("j1-a") {
		t.Error("after a restore, the finish that ended the task does not share the table's record, or the earlier one does")
	}
	for name, st := range map[string]*Store{"live": s, "restored": r} {
		if got := replay(st, first, name+": replay of the first finish"); !got.SameState(&failed) {
			t.Errorf("%s: the first finish replays as %+v, want %+v", name, got, failed)
		}
		if got := replay(st, second, name+": replay of the second finish"); !got.SameState(&succeeded) {
			t.Errorf("%s: the second finish replays as %+v, want %+v", name, got, succeeded)
		}
	}
	// A finish that requeued its task, restored while the task is still
	// as it left it: the restored finish shares the record (a finish
	// record), frozen, so the cancel that follows changes a copy.
	r2 := New()
	if err := r2.Restore(bytes.NewReader(early.Bytes())); err != nil {
		t.Fatal(err)
	}
	if err := r2.Apply(command.CancelJob{JobID: "j1", By: "admin", Now: at(4)}).(Result).Err(); err != nil {
		t.Fatalf("cancel: %v", err)
	}
	if r2.tasks.Get("j1-a").State != taskCancelled {
		t.Fatalf("the cancel left the task %s", r2.tasks.Get("j1-a").State)
	}
	if got := replay(r2, first, "replay after a restore and a cancel"); !got.SameState(&failed) {
		t.Errorf("after a restore and a cancel, the first finish replays as %+v, want %+v", got, failed)
	}
}
