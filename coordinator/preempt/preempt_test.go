package preempt

import (
	"context"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/sched/preemption"
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/internal/clock"
)

var t0 = time.Date(2026, 12, 7, 3, 0, 0, 0, time.UTC)

// borrowed is a store where team ml (no quota) runs m-a on w1's only
// GPU, started at t0, and team research (quota: one GPU) waits with r-a.
func borrowed(t *testing.T) (*state.Store, state.Proposer) {
	t.Helper()
	s := state.New()
	propose := func(_ context.Context, c command.Command) (state.Result, error) {
		return s.Apply(c).(state.Result), nil
	}
	job := func(id, team string) command.SubmitJob {
		return command.SubmitJob{JobID: id, TaskIDs: []string{id + "-a"}, Team: team, CreatedBy: "admin", Now: t0,
			Spec: command.JobSpec{Executor: "exec", Config: []byte(`{"command":"true"}`), Count: 1, MaxAttempts: 1, Resources: &command.Resources{GPUs: 1}}}
	}
	for _, c := range []command.Command{
		command.RegisterWorker{WorkerID: "w1", Credential: command.CredentialRecord{ID: "cred-w1", Kind: "worker", Hash: "h"}, Capabilities: []string{"*"}, Executors: []string{"exec"},
			Devices: []command.Device{{UUID: "GPU-1", Name: "NVIDIA H100 80GB HBM3", MemoryMiB: 81559, Healthy: true}}, Now: t0},
		command.CreateTeam{Name: "ml", Settings: command.TeamSettings{WeightCenti: 100}, By: "admin", Now: t0},
		command.CreateTeam{Name: "research", Settings: command.TeamSettings{WeightCenti: 100, QuotaCentiGPUs: 100}, By: "admin", Now: t0},
		job("m", "ml"),
		command.AssignTask{TaskID: "m-a", WorkerID: "w1", AttemptID: "att-m", Devices: []string{"GPU-1"}, Now: t0},
		command.StartTask{TaskID: "m-a", WorkerID: "w1", AttemptID: "att-m", Now: t0},
		job("r", "research"),
	} {
		if r := s.Apply(c).(state.Result); r.Err() != nil {
			t.Fatalf("%T: %v", c, r.Err())
		}
	}
	return s, propose
}

func stopping(s *state.Store) bool {
	for _, a := range s.ActiveTasks("w1") {
		if a.TaskID == "m-a" && a.Preempted {
			return true
		}
	}
	return false
}

// Look preempts nothing before the victim's minimum runtime, then once;
// the hold it leaves keeps the next look from preempting again.
func TestLookHonoursTheMinimumRuntime(t *testing.T) {
	s, propose := borrowed(t)
	clk := clock.NewFake(t0.Add(time.Minute))
	l := New(s, propose, clk, nil, Config{Options: preemption.Options{MinRuntime: 5 * time.Minute}})
	if n := l.Look(context.Background()); n != 0 || stopping(s) {
		t.Fatalf("preempted %d before the minimum runtime", n)
	}
	clk.Advance(5 * time.Minute)
	if n := l.Look(context.Background()); n != 1 || !stopping(s) {
		t.Fatalf("preempted %d once the minimum runtime passed", n)
	}
	if n := l.Look(context.Background()); n != 0 {
		t.Fatalf("preempted %d more while the first victim stops", n)
	}
}

// A disabled loop returns at once and preempts nothing.
func TestDisabledLoopDoesNothing(t *testing.T) {
	s, propose := borrowed(t)
	clk := clock.NewFake(t0.Add(time.Hour))
	New(s, propose, clk, nil, Config{Disabled: true}).Run(context.Background())
	if stopping(s) {
		t.Fatal("a disabled loop preempted")
	}
}

// Run looks again at its interval, with no state change to wake it.
func TestRunLooksAtItsInterval(t *testing.T) {
	s, propose := borrowed(t)
	clk := clock.NewFake(t0.Add(time.Minute))
	l := New(s, propose, clk, nil, Config{Options: preemption.Options{MinRuntime: 5 * time.Minute}, Interval: 10 * time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); l.Run(ctx) }()
	defer func() { cancel(); <-done }()
	deadline := time.After(10 * time.Second)
	for !stopping(s) {
		waitArmed(t, clk, deadline)
		clk.Advance(10 * time.Second)
	}
	if got := clk.Now().Sub(t0); got < 5*time.Minute {
		t.Fatalf("preempted after %s, before the minimum runtime", got)
	}
}

// waitArmed waits until the loop is blocked on the clock.
func waitArmed(t *testing.T, clk *clock.Fake, deadline <-chan time.Time) {
	t.Helper()
	for clk.Waiters() == 0 {
		select {
		case <-deadline:
			t.Fatal("the loop never waited on the clock")
		case <-time.After(time.Millisecond):
		}
	}
}
