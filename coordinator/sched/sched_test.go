package sched

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/internal/clock"
	"github.com/gpulayer/gpulayer/sdk/api"
)

var t0 = time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)

func TestHeldBack(t *testing.T) {
	loss := t0.Add(time.Minute)
	before, after := loss.Add(-time.Second), loss.Add(time.Second)
	lostOnW := state.Task{Attempts: []state.Attempt{{WorkerID: "w", State: api.AttemptLost, EndedAt: loss}}}
	for _, c := range []struct {
		name         string
		task         state.Task
		worker       string
		asked, heard time.Time
		want         holdBack
	}{
		{"lost on w, w acquires, never heard from (a new leader)", lostOnW, "w", after, time.Time{}, notHeardSinceLoss},
		{"lost on w, w acquires, last heartbeat before the loss", lostOnW, "w", after, before, notHeardSinceLoss},
		{"lost on w, w acquires, heartbeat at the loss", lostOnW, "w", after, loss, notHeardSinceLoss},
		{"lost on w, w heartbeats after the loss and acquires", lostOnW, "w", after.Add(time.Second), after, handOut},
		{"lost on w, w's acquire in flight since before the loss", lostOnW, "w", before, after, askedBeforeLoss},
		{"lost on w, w's acquire in flight, not heard from", lostOnW, "w", before, time.Time{}, askedBeforeLoss},
		{"lost on w, another worker acquires", lostOnW, "x", after, time.Time{}, handOut},
		{"lost on w, placed on w by another worker's acquire, not heard", lostOnW, "w", time.Time{}, before, notHeardSinceLoss},
		{"lost on w, placed on w by another worker's acquire, heard", lostOnW, "w", time.Time{}, after, handOut},
		{"failed on w (not lost)", state.Task{Attempts: []state.Attempt{{WorkerID: "w", State: api.TaskFailed, EndedAt: loss}}}, "w", after, time.Time{}, handOut},
		{"never attempted", state.Task{}, "w", after, time.Time{}, handOut},
		{"lost on w to a GPU fault w reported, w acquires at once", state.Task{Attempts: []state.Attempt{{WorkerID: "w", State: api.AttemptLost, EndedAt: loss, GPUFault: "GPU-1"}}}, "w", after, before, handOut},
		{"lost on w, then lost on x; w not heard since its own loss", state.Task{Attempts: []state.Attempt{
			{WorkerID: "w", State: api.AttemptLost, EndedAt: loss},
			{WorkerID: "x", State: api.AttemptLost, EndedAt: after},
		}}, "w", after.Add(time.Minute), before, notHeardSinceLoss},
		{"lost on w twice; heard between the losses only", state.Task{Attempts: []state.Attempt{
			{WorkerID: "w", State: api.AttemptLost, EndedAt: before},
			{WorkerID: "w", State: api.AttemptLost, EndedAt: after},
		}}, "w", after.Add(time.Minute), loss, notHeardSinceLoss},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := heldBack(&c.task, c.worker, c.asked, c.heard); got != c.want {
				t.Fatalf("heldBack = %d, want %d", got, c.want)
			}
		})
	}
}

// fakeLeases records heartbeats for LastSeen.
type fakeLeases struct {
	mu    sync.Mutex
	heard map[string]time.Time
}

func (f *fakeLeases) Assigned(string, string, string, time.Duration, time.Time) {}

func (f *fakeLeases) LastSeen(w string) (time.Time, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	at, ok := f.heard[w]
	return at, ok
}

func (f *fakeLeases) heartbeat(w string, at time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.heard[w] = at
}

// cluster is a scheduler over a real state, its proposals applied at once.
type cluster struct {
	store  *state.Store
	clk    *clock.Fake
	leases *fakeLeases
	s      *Scheduler
}

func newCluster(t *testing.T, workers ...string) *cluster {
	t.Helper()
	c := &cluster{store: state.New(), clk: clock.NewFake(t0), leases: &fakeLeases{heard: map[string]time.Time{}}}
	propose := func(_ context.Context, cmd command.Command) (state.Result, error) {
		return c.store.Apply(cmd).(state.Result), nil
	}
	c.s = New(c.store, propose, c.leases, c.clk)
	for _, w := range workers {
		c.apply(t, command.RegisterWorker{WorkerID: w, Credential: command.CredentialRecord{ID: "cred-" + w, Kind: "worker", Hash: "h-" + w}, Capabilities: []string{"*"}, Executors: []string{"exec"}, Now: t0})
	}
	c.apply(t, command.SubmitJob{JobID: "j", TaskIDs: []string{"j-0"}, Spec: command.JobSpec{Executor: "exec", Config: []byte(`{"command":"true"}`), MaxAttempts: 5}, CreatedBy: "admin", Now: t0})
	return c
}

func (c *cluster) apply(t *testing.T, cmd command.Command) {
	t.Helper()
	if r := c.store.Apply(cmd).(state.Result); r.Err() != nil {
		t.Fatalf("%T: %v", cmd, r.Err())
	}
}

func (c *cluster) acquire(t *testing.T, w string) *api.Assignment {
	t.Helper()
	got, err := c.s.Acquire(t.Context(), w, api.AcquireRequest{})
	if err != nil {
		t.Fatalf("acquire by %s: %v", w, err)
	}
	if len(got) == 0 {
		return nil
	}
	return &got[0]
}

// lose has w take the task, then its lease lapse a second later.
func (c *cluster) lose(t *testing.T, w string) {
	t.Helper()
	a := c.acquire(t, w)
	if a == nil {
		t.Fatalf("%s got nothing", w)
	}
	c.clk.Advance(time.Second)
	c.apply(t, command.LoseAttempt{TaskID: a.ID, AttemptID: a.AttemptID, Reason: "lease expired on worker " + w, Now: c.clk.Now()})
	c.clk.Advance(time.Second)
}

// The rule through Acquire, on a real state: the task whose attempt was
// lost on w goes to w only once w has heartbeated since; to others at
// once.
func TestAcquireHoldsBackALostAttemptFromItsSilentWorker(t *testing.T) {
	for _, c := range []struct {
		name string
		// before runs after w took the task and before the loss; after
		// runs after the loss; both may heartbeat.
		before, after func(cl *cluster)
		who           string
		want          bool
	}{
		{"w acquires, no heartbeat since the loss", nil, nil, "w", false},
		{"w acquires, last heartbeat before the loss", func(cl *cluster) { cl.leases.heartbeat("w", cl.clk.Now()) }, nil, "w", false},
		{"w acquires after a heartbeat since the loss", nil, func(cl *cluster) { cl.leases.heartbeat("w", cl.clk.Now()) }, "w", true},
		{"another worker acquires", nil, nil, "x", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			cl := newCluster(t, "w", "x")
			a := cl.acquire(t, "w")
			if a == nil {
				t.Fatal("w got nothing")
			}
			cl.clk.Advance(time.Second)
			if c.before != nil {
				c.before(cl)
			}
			cl.clk.Advance(time.Second)
			cl.apply(t, command.LoseAttempt{TaskID: a.ID, AttemptID: a.AttemptID, Reason: "lease expired on worker w", Now: cl.clk.Now()})
			cl.clk.Advance(time.Second)
			if c.after != nil {
				c.after(cl)
			}
			cl.clk.Advance(time.Second)
			got := cl.acquire(t, c.who)
			if (got != nil) != c.want {
				t.Fatalf("%s got %+v, want a task: %v", c.who, got, c.want)
			}
			if got != nil && (got.ID != a.ID || got.Attempt != 2) {
				t.Fatalf("%s got %+v, want attempt 2 of %s", c.who, got, a.ID)
			}
			if !c.want {
				// Held back from w, the task is still there for x.
				if x := cl.acquire(t, "x"); x == nil || x.ID != a.ID {
					t.Fatalf("x got %+v after w was refused, want %s", x, a.ID)
				}
			}
		})
	}
}

// A long poll that w had in flight when its attempt was lost never gets
// the retry, even if w heartbeats meanwhile: it ends at once, with
// nothing (its wait not run out); w's next acquire gets the task.
func TestAcquireInFlightAtTheLossEndsWithNothing(t *testing.T) {
	cl := newCluster(t, "w")
	cl.apply(t, command.SubmitJob{JobID: "k", TaskIDs: []string{"k-0"}, Spec: command.JobSpec{Executor: "exec", Config: []byte(`{"command":"true"}`)}, CreatedBy: "admin", Now: t0})
	first := cl.acquire(t, "w")
	second := cl.acquire(t, "w")
	if first == nil || second == nil || cl.acquire(t, "w") != nil {
		t.Fatal("w should hold both tasks, and nothing be left")
	}
	type answer struct {
		got []api.Assignment
		err error
	}
	done := make(chan answer, 1)
	go func() {
		got, err := cl.s.Acquire(t.Context(), "w", api.AcquireRequest{WaitSeconds: 30})
		done <- answer{got, err}
	}()
	deadline := time.Now().Add(10 * time.Second)
	for cl.clk.Waiters() == 0 { // the poll is waiting on its deadline
		if time.Now().After(deadline) {
			t.Fatal("the acquire never started waiting")
		}
		time.Sleep(time.Millisecond)
	}
	cl.clk.Advance(time.Second)
	cl.apply(t, command.LoseAttempt{TaskID: first.ID, AttemptID: first.AttemptID, Reason: "lease expired on worker w", Now: cl.clk.Now()})
	cl.clk.Advance(time.Second)
	cl.leases.heartbeat("w", cl.clk.Now())
	select {
	case a := <-done:
		if a.err != nil || len(a.got) != 0 {
			t.Fatalf("the acquire in flight at the loss got %+v %v, want nothing", a.got, a.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the acquire in flight at the loss kept waiting")
	}
	got := cl.acquire(t, "w")
	if got == nil || got.ID != first.ID || got.Attempt != 2 {
		t.Fatalf("w's next acquire got %+v, want attempt 2 of %s", got, first.ID)
	}
}

// A long poll from w that began after the loss, while w was silent,
// takes the task once w heartbeats: it looks again every unheardRecheck,
// a heartbeat changing no state that would wake it.
func TestWaitingAcquireTakesTheTaskOnceItsWorkerIsHeard(t *testing.T) {
	cl := newCluster(t, "w")
	cl.lose(t, "w")
	done := make(chan []api.Assignment, 1)
	go func() {
		got, _ := cl.s.Acquire(context.Background(), "w", api.AcquireRequest{WaitSeconds: 30})
		done <- got
	}()
	deadline := time.Now().Add(10 * time.Second)
	for cl.clk.Waiters() < 2 { // its deadline and its recheck
		select {
		case got := <-done:
			t.Fatalf("a silent worker's acquire got %+v", got)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the acquire never started waiting")
		}
		time.Sleep(time.Millisecond)
	}
	cl.leases.heartbeat("w", cl.clk.Now())
	cl.clk.Advance(unheardRecheck)
	select {
	case got := <-done:
		if len(got) != 1 || got[0].Attempt != 2 {
			t.Fatalf("after the heartbeat: %+v, want attempt 2", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting acquire did not take the task after the heartbeat")
	}
}

// A gang is placed whole by one worker's acquire, members on other
// workers too: a member whose attempt was lost on w is not placed on w
// while w is silent, whoever asks; the gang waits (other work is still
// handed out) and is placed once w has heartbeated.
func TestGangMemberIsNotPlacedOnItsSilentWorker(t *testing.T) {
	cl := newCluster(t, "w", "x")
	// The plain job "j" of newCluster goes first.
	if a := cl.acquire(t, "x"); a == nil || a.JobID != "j" {
		t.Fatalf("x got %+v, want j's task", a)
	}
	cl.apply(t, command.FinishTask{TaskID: "j-0", WorkerID: "x", AttemptID: mustTask(t, cl, "j-0").AttemptID, Now: cl.clk.Now()})
	cl.apply(t, command.SubmitJob{JobID: "g", TaskIDs: []string{"g-0", "g-1"}, Spec: command.JobSpec{Executor: "exec", Config: []byte(`{"command":"true"}`), Count: 2, Gang: true, MaxAttempts: 5}, CreatedBy: "admin", Now: t0})
	// x's acquire places rank 0 on x and rank 1 on w.
	if a := cl.acquire(t, "x"); a == nil || a.ID != "g-0" {
		t.Fatalf("x got %+v, want g-0", a)
	}
	lost := mustTask(t, cl, "g-1")
	if lost.WorkerID != "w" {
		t.Fatalf("g-1 placed on %q, want w", lost.WorkerID)
	}
	cl.clk.Advance(time.Second)
	cl.apply(t, command.LoseAttempt{TaskID: "g-1", AttemptID: lost.AttemptID, Reason: "lease expired on worker w", Now: cl.clk.Now()})
	cl.clk.Advance(time.Second)
	if g0, g1 := mustTask(t, cl, "g-0"), mustTask(t, cl, "g-1"); g0.State != api.TaskPending || g1.State != api.TaskPending {
		t.Fatalf("after the loss: g-0 %s, g-1 %s, want both pending (the gang retried whole)", g0.State, g1.State)
	}
	if a := cl.acquire(t, "x"); a != nil {
		t.Fatalf("x's acquire placed the gang with g-1 on silent w: %+v", a)
	}
	if g1 := mustTask(t, cl, "g-1"); g1.State != api.TaskPending {
		t.Fatalf("g-1 %s, want pending", g1.State)
	}
	cl.leases.heartbeat("w", cl.clk.Now())
	cl.clk.Advance(time.Second)
	if a := cl.acquire(t, "x"); a == nil || a.ID != "g-0" {
		t.Fatalf("x got %+v after w heartbeated, want g-0", a)
	}
	if g1 := mustTask(t, cl, "g-1"); g1.WorkerID != "w" || len(g1.Attempts) != 2 {
		t.Fatalf("g-1 on %q after %d attempts, want w's second", g1.WorkerID, len(g1.Attempts))
	}
}

func mustTask(t *testing.T, cl *cluster, id string) state.Task {
	t.Helper()
	task, err := cl.store.Task(id)
	if err != nil {
		t.Fatal(err)
	}
	return task
}
