package state

import (
	"errors"
	"slices"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/audit"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// oneRunning is a store where w1 runs task j-a of a job that allows one
// attempt only.
func oneRunning(t *testing.T) *Store {
	t.Helper()
	s := New()
	job := submit("j", 1, 0)
	job.Spec.MaxAttempts = 1
	mustApply(t, s, register("w1", "GPU-1"), register("w2", "GPU-2"), job,
		command.AssignTask{TaskID: "j-a", WorkerID: "w1", AttemptID: "a1", Now: at(2)},
		command.StartTask{TaskID: "j-a", WorkerID: "w1", AttemptID: "a1", Now: at(3)})
	return s
}

func control(id, action string, deadline int) command.ControlWorker {
	return command.ControlWorker{WorkerID: id, Action: action, Deadline: at(deadline), By: "admin", Now: at(10)}
}

func task(t *testing.T, s *Store, id string) Task {
	t.Helper()
	tk, err := s.Task(id)
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

func preempted(s *Store, worker string) []string {
	var out []string
	for _, a := range s.ActiveTasks(worker) {
		if a.Preempted {
			out = append(out, a.TaskID)
		}
	}
	return out
}

// A drained worker gets nothing new and its running task goes on to the
// end; past the deadline what is left is asked to stop, and however its
// attempt then ends the task is requeued without using up an attempt.
func TestDrainStopsTasksAtTheDeadlineWithoutUsingAnAttempt(t *testing.T) {
	ends := []struct {
		name string
		end  command.Command
	}{
		{"killed by the stop", command.FinishTask{TaskID: "j-a", WorkerID: "w1", AttemptID: "a1", ExitCode: 143, Now: at(40)}},
		{"agent shut down", command.FailTask{TaskID: "j-a", WorkerID: "w1", AttemptID: "a1", Reason: "agent shut down while the task ran", Now: at(40)}},
		{"lease lapsed", command.LoseAttempt{TaskID: "j-a", AttemptID: "a1", Reason: "lease expired on worker w1", Now: at(40)}},
	}
	for _, e := range ends {
		t.Run(e.name, func(t *testing.T) {
			s := oneRunning(t)
			mustApply(t, s, control("w1", command.ActionDrain, 30), submit("k", 1, 0))
			if r := apply(t, s, command.AssignTask{TaskID: "k-a", WorkerID: "w1", AttemptID: "b1", Now: at(11)}); !errors.Is(r.Err(), ErrConflict) {
				t.Fatalf("assigning to a draining worker: %v, want conflict", r.Err())
			}
			if _, ok, _ := s.Match("w1", "", nil); ok {
				t.Fatal("a draining worker was matched")
			}
			mustApply(t, s, command.ExpireDrains{Now: at(29)})
			if got := preempted(s, "w1"); len(got) != 0 {
				t.Fatalf("told to stop before the deadline: %v", got)
			}
			mustApply(t, s, command.ExpireDrains{Now: at(30)})
			if got := preempted(s, "w1"); !slices.Equal(got, []string{"j-a"}) {
				t.Fatalf("told to stop at the deadline: %v, want [j-a]", got)
			}
			if next, ok := s.NextDrainDeadline(); ok {
				t.Fatalf("a deadline still pending after it passed: %v", next)
			}
			mustApply(t, s, e.end)
			tk := task(t, s, "j-a")
			if tk.State != api.TaskPending || tk.Attempts[0].State != api.AttemptPreempted || tk.AttemptsUsed() != 0 {
				t.Fatalf("after the stop: %s, attempt %s, %d used (%s)", tk.State, tk.Attempts[0].State, tk.AttemptsUsed(), tk.Attempts[0].Reason)
			}
			// The only attempt the job allows is still to come.
			mustApply(t, s, command.AssignTask{TaskID: "j-a", WorkerID: "w2", AttemptID: "a2", Now: at(41)},
				command.FinishTask{TaskID: "j-a", WorkerID: "w2", AttemptID: "a2", ExitCode: 0, Now: at(42)})
			if tk := task(t, s, "j-a"); tk.State != api.TaskSucceeded || len(tk.Attempts) != 2 {
				t.Fatalf("retried elsewhere: %s after %d attempts", tk.State, len(tk.Attempts))
			}
		})
	}
}

// A task that finishes on its own while its worker drains ends as usual.
func TestDrainLetsRunningTasksFinish(t *testing.T) {
	s := oneRunning(t)
	mustApply(t, s, control("w1", command.ActionDrain, 30),
		command.FinishTask{TaskID: "j-a", WorkerID: "w1", AttemptID: "a1", ExitCode: 0, Now: at(20)},
		command.ExpireDrains{Now: at(30)})
	if tk := task(t, s, "j-a"); tk.State != api.TaskSucceeded {
		t.Fatalf("task %s", tk.State)
	}
	w, _ := s.Worker("w1")
	if w.Worker.Status != api.WorkerDraining {
		t.Fatalf("worker %s after its deadline, want still draining until resumed", w.Worker.Status)
	}
}

// A stop asks every running task to stop at once and requeues the ones
// assigned but not started; a resume makes the worker ready again.
func TestStopPreemptsAtOnceAndResumeReadies(t *testing.T) {
	s := oneRunning(t)
	mustApply(t, s, submit("k", 1, 0), command.AssignTask{TaskID: "k-a", WorkerID: "w1", AttemptID: "b1", Now: at(4)},
		control("w1", command.ActionStop, 0))
	if got := preempted(s, "w1"); !slices.Equal(got, []string{"j-a"}) {
		t.Fatalf("told to stop: %v, want the running task only", got)
	}
	k := task(t, s, "k-a")
	if k.State != api.TaskPending || k.Attempts[0].State != api.AttemptPreempted {
		t.Fatalf("assigned task after the stop: %s (%+v)", k.State, k.Attempts)
	}
	if r := apply(t, s, command.StartTask{TaskID: "k-a", WorkerID: "w1", AttemptID: "b1", Now: at(11)}); !errors.Is(r.Err(), ErrStaleAttempt) {
		t.Fatalf("starting the requeued attempt: %v, want stale_attempt", r.Err())
	}
	if r := apply(t, s, control("w1", command.ActionDrain, 60)); !errors.Is(r.Err(), ErrConflict) {
		t.Fatalf("draining a stopping worker: %v, want conflict", r.Err())
	}
	mustApply(t, s, control("w1", command.ActionResume, 0))
	w, _ := s.Worker("w1")
	if w.Worker.Status != api.WorkerReady || w.Worker.DrainedBy != "" {
		t.Fatalf("after resume: %s by %q", w.Worker.Status, w.Worker.DrainedBy)
	}
	if _, ok, _ := s.Match("w1", "", nil); !ok {
		t.Fatal("a resumed worker is not matched to the requeued task")
	}
}

// A worker may lift a drain it asked for itself, not one an admin asked
// for; its own drain does not shorten or replace an admin's.
func TestSelfDrainAndResume(t *testing.T) {
	self := func(action string, deadline int) command.ControlWorker {
		return command.ControlWorker{WorkerID: "w1", Action: action, Self: true, Deadline: at(deadline), By: "w1", Now: at(10)}
	}
	s := oneRunning(t)
	mustApply(t, s, self(command.ActionDrain, 100))
	if w, _ := s.Worker("w1"); w.Worker.DrainedBy != api.DrainedBySelf {
		t.Fatalf("drained by %q", w.Worker.DrainedBy)
	}
	mustApply(t, s, self(command.ActionResume, 0))

	mustApply(t, s, control("w1", command.ActionDrain, 500), self(command.ActionDrain, 20))
	w, _ := s.Worker("w1")
	if w.Worker.DrainedBy != "admin" || !w.Worker.DrainDeadline.Equal(at(500)) {
		t.Fatalf("admin's drain after the worker's own: by %q until %v", w.Worker.DrainedBy, w.Worker.DrainDeadline)
	}
	if r := apply(t, s, self(command.ActionResume, 0)); !errors.Is(r.Err(), ErrConflict) {
		t.Fatalf("worker lifting an admin's drain: %v, want conflict", r.Err())
	}
}

// Deregister drains and, once the worker holds nothing, forgets it: its
// record, credential and group memberships go; the audit log keeps it.
func TestDeregisterForgetsOnceIdle(t *testing.T) {
	s := oneRunning(t)
	mustApply(t, s, command.CreateGroup{GroupID: "g", Members: []command.GroupMember{{Kind: memberWorker, ID: "w1"}}, By: "admin", Now: at(5)},
		command.ControlWorker{WorkerID: "w1", Action: command.ActionDeregister, Self: true, Deadline: at(60), By: "w1", Now: at(10)})
	if w, err := s.Worker("w1"); err != nil || !w.Worker.Deregister || w.Worker.Status != api.WorkerDraining {
		t.Fatalf("while its task runs: %+v, %v", w.Worker, err)
	}
	mustApply(t, s, command.FinishTask{TaskID: "j-a", WorkerID: "w1", AttemptID: "a1", ExitCode: 0, Now: at(20)})
	if _, err := s.Worker("w1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("after its last task: %v, want not found", err)
	}
	if s.credentials.Has("cred-w1") {
		t.Fatal("the credential outlived its worker")
	}
	if g, _ := s.Group("g"); len(g.Group.Members) != 0 {
		t.Fatalf("group still lists %v", g.Group.Members)
	}
	kinds := []string{}
	for _, ev := range s.Audit(audit.Filter{}) {
		if ev.WorkerID == "w1" {
			kinds = append(kinds, ev.Kind)
		}
	}
	if !slices.Contains(kinds, "worker.deregistering") || !slices.Contains(kinds, "worker.deregistered") {
		t.Fatalf("audit of w1: %v", kinds)
	}
	if tk := task(t, s, "j-a"); tk.State != api.TaskSucceeded {
		t.Fatalf("its task: %s", tk.State)
	}
}

// Bad controls change nothing.
func TestControlRefusals(t *testing.T) {
	cases := []struct {
		name string
		prep []command.Command
		c    command.ControlWorker
		want error
	}{
		{"unknown worker", nil, control("nobody", command.ActionDrain, 30), ErrNotFound},
		{"revoked worker", []command.Command{command.RevokeWorker{WorkerID: "w1", By: "admin", Now: at(5)}}, control("w1", command.ActionDrain, 30), ErrConflict},
		{"unknown action", nil, control("w1", "reboot", 30), ErrInvalid},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := oneRunning(t)
			mustApply(t, s, c.prep...)
			before := snapshotBytes(t, s)
			if r := apply(t, s, c.c); !errors.Is(r.Err(), c.want) {
				t.Fatalf("%v, want %v", r.Err(), c.want)
			}
			if after := snapshotBytes(t, s); string(after) != string(before) {
				t.Fatal("a refused control changed the state")
			}
		})
	}
}

// A job cancelled while its task is being preempted ends cancelled.
func TestCancelWinsOverPreemption(t *testing.T) {
	s := oneRunning(t)
	mustApply(t, s, control("w1", command.ActionStop, 0), command.CancelJob{JobID: "j", By: "admin", Now: at(11)},
		command.FinishTask{TaskID: "j-a", WorkerID: "w1", AttemptID: "a1", ExitCode: 143, Now: at(12)})
	if tk := task(t, s, "j-a"); tk.State != api.TaskCancelled {
		t.Fatalf("task %s, want cancelled", tk.State)
	}
}
