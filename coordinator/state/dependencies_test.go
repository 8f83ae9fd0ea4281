package state

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/command"
)

// dependent is a one-task job that waits for deps.
func dependent(id string, deps ...command.Dependency) command.SubmitJob {
	j := submit(id, 1, 0)
	j.Spec.DependsOn = deps
	return j
}

func dep(job, cond string) command.Dependency { return command.Dependency{Job: job, Condition: cond} }

// endAs ends the one-task job up the way outcome says, on worker w1.
func endAs(t *testing.T, s *Store, up, outcome string) {
	t.Helper()
	switch outcome {
	case taskCancelled:
		mustApply(t, s, command.CancelJob{JobID: up, By: "admin", Now: at(5)})
		return
	case taskSucceeded, taskFailed:
		code := 0
		if outcome == taskFailed {
			code = 1
		}
		mustApply(t, s, command.AssignTask{TaskID: up + "-a", WorkerID: "w1", AttemptID: "att-" + up, Now: at(3)},
			command.FinishTask{TaskID: up + "-a", WorkerID: "w1", AttemptID: "att-" + up, ExitCode: code, Now: at(4)})
	}
}

// Each condition against each way the waited-on job can end: the
// dependent is released into the queue when the condition holds and
// cancelled, naming the dependency, in the same apply when it cannot.
func TestDependencyConditions(t *testing.T) {
	holds := map[string]map[string]bool{
		command.DependSucceeded: {taskSucceeded: true, taskFailed: false, taskCancelled: false},
		command.DependFailed:    {taskSucceeded: false, taskFailed: true, taskCancelled: false},
		command.DependFinished:  {taskSucceeded: true, taskFailed: true, taskCancelled: true},
	}
	for cond, byOutcome := range holds {
		for outcome, want := range byOutcome {
			t.Run(cond+"/"+outcome, func(t *testing.T) {
				s := New()
				mustApply(t, s, register("w1"), submit("up", 1, 0), dependent("down", dep("up", cond)))
				j, _ := s.Job("down")
				if !strings.Contains(j.PendingReason, "job up") {
					t.Fatalf("waiting job's pending reason %q does not name the job it waits for", j.PendingReason)
				}
				if c, ok, _ := s.Match("w1", "", nil); !ok || c.TaskID != "up-a" {
					t.Fatalf("match while down waits: %+v %v, want up-a", c, ok)
				}
				endAs(t, s, "up", outcome)
				j, _ = s.Job("down")
				got := j.Tasks[0]
				if want {
					if got.State != taskPending || j.PendingReason != "" {
						t.Fatalf("condition held, but down is %s (%q, pending reason %q)", got.State, got.Reason, j.PendingReason)
					}
					if c, ok, _ := s.Match("w1", "", nil); !ok || c.TaskID != "down-a" {
						t.Fatalf("released task not matched: %+v %v", c, ok)
					}
					return
				}
				if got.State != taskCancelled || !strings.Contains(got.Reason, "dependency up ended "+outcome) || !strings.Contains(got.Reason, cond) {
					t.Fatalf("condition broken, but down is %s with reason %q", got.State, got.Reason)
				}
				if _, ok, _ := s.Match("w1", "", nil); ok {
					t.Fatal("a cancelled dependent was matched")
				}
				if events, _, _ := s.audit.Frozen(); len(events) == 0 {
					t.Fatal("no audit event")
				} else if ev := events[len(events)-1]; ev.Kind != "job.cancelled" || ev.Subject != "down" || !strings.Contains(ev.Detail, "dependency up") {
					t.Fatalf("last audit event %+v, want down's cancellation", ev)
				}
			})
		}
	}
}

// A job whose dependency already ended is settled at submit: queued at
// once when its condition holds, cancelled at once when it cannot.
func TestDependencyOnEndedJob(t *testing.T) {
	s := New()
	mustApply(t, s, register("w1"), submit("up", 1, 0))
	endAs(t, s, "up", taskSucceeded)
	mustApply(t, s, dependent("ok", dep("up", command.DependSucceeded)), dependent("never", dep("up", command.DependFailed)))
	if j, _ := s.Job("ok"); j.Tasks[0].State != taskPending || j.PendingReason != "" {
		t.Fatalf("ok: %s, pending reason %q", j.Tasks[0].State, j.PendingReason)
	}
	if j, _ := s.Job("never"); j.Tasks[0].State != taskCancelled || !strings.Contains(j.Tasks[0].Reason, "dependency up") {
		t.Fatalf("never: %s %q", j.Tasks[0].State, j.Tasks[0].Reason)
	}
}

// A chain of 100 jobs runs one after another, each released by its
// predecessor's success; a failure at the head cancels the whole rest of
// a chain in the apply that ended it.
func TestDependencyChain(t *testing.T) {
	const n = 100
	s := New()
	mustApply(t, s, register("w1"), submit("c0", 1, 0))
	for i := 1; i < n; i++ {
		mustApply(t, s, dependent(fmt.Sprintf("c%d", i), dep(fmt.Sprintf("c%d", i-1), command.DependSucceeded)))
	}
	for i := range n {
		c, ok, _ := s.Match("w1", "", nil)
		if want := fmt.Sprintf("c%d-a", i); !ok || c.TaskID != want {
			t.Fatalf("step %d: matched %+v %v, want %s", i, c, ok, want)
		}
		endAs(t, s, fmt.Sprintf("c%d", i), taskSucceeded)
	}

	s = New()
	mustApply(t, s, register("w1"), submit("c0", 1, 0))
	for i := 1; i < n; i++ {
		mustApply(t, s, dependent(fmt.Sprintf("c%d", i), dep(fmt.Sprintf("c%d", i-1), command.DependSucceeded)))
	}
	endAs(t, s, "c0", taskFailed)
	for i := 1; i < n; i++ {
		j, _ := s.Job(fmt.Sprintf("c%d", i))
		if j.Tasks[0].State != taskCancelled || !strings.Contains(j.Tasks[0].Reason, fmt.Sprintf("dependency c%d", i-1)) {
			t.Fatalf("c%d after the head failed: %s %q", i, j.Tasks[0].State, j.Tasks[0].Reason)
		}
	}
}

// A job waiting for two others is released only when both have ended.
func TestDependencyWaitsForEvery(t *testing.T) {
	s := New()
	mustApply(t, s, register("w1"), submit("a", 1, 0), submit("b", 1, 0),
		dependent("both", dep("a", command.DependSucceeded), dep("b", command.DependFinished)))
	endAs(t, s, "a", taskSucceeded)
	if j, _ := s.Job("both"); !strings.Contains(j.PendingReason, "job b") {
		t.Fatalf("after a: pending reason %q, want one naming b", j.PendingReason)
	}
	// Restored midway, the index is rebuilt: b's end still releases it.
	r, _ := roundTrip(t, s)
	for _, st := range []*Store{s, r} {
		mustApply(t, st, command.CancelJob{JobID: "b", By: "admin", Now: at(6)})
		if c, ok, _ := st.Match("w1", "", nil); !ok || c.TaskID != "both-a" {
			t.Fatalf("after b: matched %+v %v", c, ok)
		}
	}
}

// Refused submissions change nothing (but the audit of the refusal).
func TestDependencySubmitRefusals(t *testing.T) {
	many := make([]command.Dependency, command.MaxDependencies+1)
	for i := range many {
		many[i] = dep("up", command.DependFinished)
	}
	gang := submit("g", 4, 0)
	gang.Spec.Gang, gang.Spec.Parallelism = true, 2
	over := submit("p", 2, 0)
	over.Spec.Parallelism = 3
	cases := []struct {
		name string
		c    command.SubmitJob
		want error
	}{
		{"self", dependent("me", dep("me", command.DependSucceeded)), ErrInvalid},
		{"unknown job", dependent("x", dep("nope", command.DependSucceeded)), ErrNotFound},
		{"twice", dependent("x", dep("up", command.DependSucceeded), dep("up", command.DependFailed)), ErrInvalid},
		{"bad condition", dependent("x", dep("up", "started")), ErrInvalid},
		{"65 entries", dependent("x", many...), ErrInvalid},
		{"parallelism over count", over, ErrInvalid},
		{"gang split by parallelism", gang, ErrInvalid},
	}
	s := New()
	mustApply(t, s, register("w1"), submit("up", 1, 0))
	before := encodeWithoutAudit(t, s)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := s.Apply(c.c).(Result).Err(); !errors.Is(err, c.want) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
			if !bytes.Equal(before, encodeWithoutAudit(t, s)) {
				t.Fatal("a refused submission changed the state")
			}
		})
	}
}

// Tasks held out of the queue still target their group: a group that a
// waiting job, or the backlog of a bounded job, targets cannot be deleted,
// and the refusal counts every unfinished task.
func TestHeldTasksKeepTheirGroup(t *testing.T) {
	target := &command.Target{Kind: "group", ID: "g"}
	waiting := dependent("waits", dep("up", command.DependSucceeded))
	waiting.Spec.Target = target
	backlog := submit("backlog", 3, 0)
	backlog.Spec.Target, backlog.Spec.Parallelism = target, 1
	for _, c := range []struct {
		name string
		job  command.SubmitJob
		want string
	}{{"waiting", waiting, "1 unfinished tasks"}, {"backlog", backlog, "3 unfinished tasks"}} {
		t.Run(c.name, func(t *testing.T) {
			s := New()
			mustApply(t, s, register("w1"), mkGroup("g", wm("w1")), submit("up", 1, 0), c.job)
			r, _ := roundTrip(t, s)
			for _, st := range []*Store{s, r} {
				err := st.Apply(command.DeleteGroup{GroupID: "g", By: "admin", Now: at(9)}).(Result).Err()
				if !errors.Is(err, ErrConflict) || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("deleting a group held tasks target: %v, want a conflict counting %s", err, c.want)
				}
			}
		})
	}
}

// A placement that names a task of a waiting job (stale, or forged) is
// refused when applied, for a single task and for a gang; the waiting
// tasks still count as the team's pending ones.
func TestWaitingTasksAreNotAssigned(t *testing.T) {
	s := New()
	gang := dependent("gang", dep("up", command.DependSucceeded))
	gang.TaskIDs, gang.Spec.Count, gang.Spec.Gang = []string{"gang-a", "gang-b"}, 2, true
	mustApply(t, s, register("w1"), submit("up", 1, 0), dependent("one", dep("up", command.DependSucceeded)), gang)
	if err := s.Apply(command.AssignTask{TaskID: "one-a", WorkerID: "w1", AttemptID: "a1", Now: at(2)}).(Result).Err(); !errors.Is(err, ErrConflict) {
		t.Fatalf("assigning a waiting task: %v, want a conflict", err)
	}
	g := command.AssignGang{JobID: "gang", WorkerID: "w1", Now: at(2), Members: []command.GangMember{
		{TaskID: "gang-a", WorkerID: "w1", AttemptID: "g1"}, {TaskID: "gang-b", WorkerID: "w1", AttemptID: "g2"}}}
	if err := s.Apply(g).(Result).Err(); !errors.Is(err, ErrConflict) {
		t.Fatalf("assigning a waiting gang: %v, want a conflict", err)
	}
	if u := s.teamUsage()[command.DefaultTeam]; u.PendingTasks != 4 {
		t.Fatalf("team pending tasks %d, want 4 (up's and the three waiting)", u.PendingTasks)
	}
}
