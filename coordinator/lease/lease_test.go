package lease

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

// fakeState is a tiny replicated state: tasks held by workers, and the
// proposals the manager made against it.
type fakeState struct {
	mu       sync.Mutex
	active   map[string]state.ActiveTask // by task id
	workers  map[string]string           // id -> status
	proposed []command.Command
}

func (f *fakeState) AllActive() []state.ActiveTask {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []state.ActiveTask
	for _, a := range f.active {
		out = append(out, a)
	}
	return out
}

func (f *fakeState) ActiveTasks(w string) []state.ActiveTask {
	var out []state.ActiveTask
	for _, a := range f.AllActive() {
		if a.WorkerID == w {
			out = append(out, a)
		}
	}
	return out
}

func (f *fakeState) HeldAttempt(task, w string) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	a, ok := f.active[task]
	if !ok || a.WorkerID != w {
		return "", false
	}
	return a.AttemptID, true
}

func (f *fakeState) Workers() []state.WorkerRecord {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []state.WorkerRecord
	for id, st := range f.workers {
		out = append(out, state.WorkerRecord{Worker: state.Worker{ID: id, Status: st}})
	}
	return out
}

// propose applies what the real state machine would for the two commands
// the manager proposes.
func (f *fakeState) propose(_ context.Context, c command.Command) (state.Result, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.proposed = append(f.proposed, c)
	switch c := c.(type) {
	case command.LoseAttempt:
		delete(f.active, c.TaskID)
	case command.SetWorkerStatus:
		f.workers[c.WorkerID] = c.Status
	}
	return state.Result{}, nil
}

func (f *fakeState) take() []command.Command {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.proposed
	f.proposed = nil
	return out
}

func TestLeasesSurviveFailoverAndLapseWithoutHeartbeats(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC))
	fs := &fakeState{
		active:  map[string]state.ActiveTask{"t1": {TaskID: "t1", AttemptID: "a1", WorkerID: "w1", LeaseSeconds: 10}, "t2": {TaskID: "t2", AttemptID: "a2", WorkerID: "w2", LeaseSeconds: 10}},
		workers: map[string]string{"w1": api.WorkerReady, "w2": api.WorkerReady},
	}
	m := New(Config{Clock: clk, State: fs, Propose: fs.propose, Grace: 5 * time.Second, HeartbeatInterval: 2 * time.Second, OfflineAfter: 10 * time.Second})
	ctx := t.Context()

	// A new leader re-arms from state: lease (10 s) plus grace (5 s).
	m.rearm()
	clk.Advance(14 * time.Second)
	m.enforce(ctx)
	if got := fs.take(); len(got) != 0 {
		t.Fatalf("inside lease+grace the manager proposed %v", got)
	}
	// w1 keeps heartbeating; w2 has gone silent.
	for range 3 {
		if d := m.Heartbeat("w1", []string{"t1"}); !d.Equal(clk.Now().Add(10 * time.Second)) {
			t.Fatalf("heartbeat deadline %v, want now+10s", d)
		}
		clk.Advance(2 * time.Second)
		m.enforce(ctx)
	}
	got := fs.take()
	if len(got) != 2 {
		t.Fatalf("want w2's lease lost and w2 offline, got %v", got)
	}
	lost, ok := got[0].(command.LoseAttempt)
	if !ok || lost.TaskID != "t2" || lost.AttemptID != "a2" {
		t.Fatalf("first proposal %#v, want t2/a2 lost", got[0])
	}
	if off, ok := got[1].(command.SetWorkerStatus); !ok || off.WorkerID != "w2" || off.Status != api.WorkerOffline {
		t.Fatalf("second proposal %#v, want w2 offline", got[1])
	}
	if _, held := fs.HeldAttempt("t1", "w1"); !held {
		t.Fatal("t1 was lost although w1 kept heartbeating")
	}
	// w1 stops (last heartbeat at 18 s): its lease lapses at 28 s.
	clk.Advance(7 * time.Second)
	m.enforce(ctx)
	if got := fs.take(); len(got) != 0 {
		t.Fatalf("lease lapsed early: %v", got)
	}
	clk.Advance(2 * time.Second)
	m.enforce(ctx)
	got = fs.take()
	if len(got) != 2 || got[0].(command.LoseAttempt).TaskID != "t1" || got[1].(command.SetWorkerStatus).WorkerID != "w1" {
		t.Fatalf("want t1 lost and w1 offline, got %v", got)
	}
}

func TestUnreportedTasksAreNotRenewed(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC))
	fs := &fakeState{
		active:  map[string]state.ActiveTask{"t1": {TaskID: "t1", AttemptID: "a1", WorkerID: "w1", LeaseSeconds: 10}, "t2": {TaskID: "t2", AttemptID: "a2", WorkerID: "w1", LeaseSeconds: 10}},
		workers: map[string]string{"w1": api.WorkerReady},
	}
	m := New(Config{Clock: clk, State: fs, Propose: fs.propose, Grace: time.Second, OfflineAfter: time.Hour})
	m.rearm()
	// w1 heartbeats all along but runs only t1: the answer assigning t2
	// never reached it.
	for range 6 {
		clk.Advance(2 * time.Second)
		m.Heartbeat("w1", []string{"t1"})
		m.enforce(t.Context())
	}
	got := fs.take()
	if len(got) != 1 || got[0].(command.LoseAttempt).TaskID != "t2" {
		t.Fatalf("want only t2 lost, got %v", got)
	}
}

// leading returns a manager that has taken office over an empty state,
// with a second's grace, on a fake clock.
func leading() (*clock.Fake, *fakeState, *Manager) {
	clk := clock.NewFake(time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC))
	fs := &fakeState{active: map[string]state.ActiveTask{}, workers: map[string]string{}}
	m := New(Config{Clock: clk, State: fs, Propose: fs.propose, Grace: time.Second})
	m.rearm()
	return clk, fs, m
}

func TestStaleEntriesAreDroppedWithoutProposals(t *testing.T) {
	clk, fs, m := leading()
	// An attempt armed at assignment that has since finished.
	m.Assigned("t9", "w9", "a9", time.Second, clk.Now().Add(time.Second))
	clk.Advance(5 * time.Second)
	m.enforce(t.Context())
	if got := fs.take(); len(got) != 0 {
		t.Fatalf("proposed %v for an attempt the state no longer holds", got)
	}
	if _, ok := m.Deadline("a9"); ok {
		t.Fatal("stale entry kept")
	}
}

// An attempt whose end the state accepted holds no timer: Ended drops
// it at once, the other attempts keep theirs, and a check past both
// leases loses only the other (the state here still says both are held,
// so without Ended both would be lost).
func TestEndedAttemptsHoldNoLease(t *testing.T) {
	clk, fs, m := leading()
	fs.active["t1"] = state.ActiveTask{TaskID: "t1", WorkerID: "w1", AttemptID: "a1", LeaseSeconds: 60}
	fs.active["t2"] = state.ActiveTask{TaskID: "t2", WorkerID: "w1", AttemptID: "a2", LeaseSeconds: 60}
	m.Assigned("t1", "w1", "a1", time.Minute, clk.Now().Add(time.Minute))
	m.Assigned("t2", "w1", "a2", time.Minute, clk.Now().Add(time.Minute))
	m.Ended("a1")
	if _, ok := m.Deadline("a1"); ok {
		t.Fatal("an ended attempt kept its lease")
	}
	if d, ok := m.Deadline("a2"); !ok || !d.Equal(clk.Now().Add(time.Minute)) {
		t.Fatalf("the other attempt's lease: %v %v", d, ok)
	}
	m.Ended("never-armed") // a finish a follower answered: nothing to drop
	clk.Advance(2 * time.Minute)
	m.enforce(t.Context())
	got := fs.take()
	if len(got) != 1 || got[0].(command.LoseAttempt).AttemptID != "a2" {
		t.Fatalf("proposed %v, want a2 lost only", got)
	}
}

func TestRunStopsOnContext(t *testing.T) {
	clk := clock.NewFake(time.Now())
	fs := &fakeState{active: map[string]state.ActiveTask{}, workers: map[string]string{}}
	m := New(Config{Clock: clk, State: fs, Propose: fs.propose})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error)
	go func() { done <- m.Run(ctx) }()
	deadline := time.Now().Add(10 * time.Second)
	for clk.Waiters() == 0 {
		// Run arms its ticker right after re-arming; wait for it.
		if time.Now().After(deadline) {
			t.Fatal("Run never armed its ticker")
		}
		select {
		case err := <-done:
			t.Fatalf("Run returned early: %v", err)
		default:
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	m.Assigned("t", "w", "a", time.Second, clk.Now())
	if _, ok := m.Deadline("a"); ok {
		t.Fatal("a stopped manager armed a lease")
	}
}

// An attempt that enters the state without Assigned (its assignment
// committed after the acquire that proposed it had gone) is adopted from
// the state and lapses at its deadline plus grace, unless its worker
// reports it.
func TestUnarmedAttemptsAreAdoptedAndLapse(t *testing.T) {
	start := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	clk := clock.NewFake(start)
	fs := &fakeState{active: map[string]state.ActiveTask{}, workers: map[string]string{"w1": api.WorkerReady}}
	m := New(Config{Clock: clk, State: fs, Propose: fs.propose, Grace: time.Second, HeartbeatInterval: 2 * time.Second, OfflineAfter: time.Hour})
	ctx := t.Context()
	m.rearm() // leadership taken with nothing active

	fs.mu.Lock()
	fs.active["ghost"] = state.ActiveTask{TaskID: "ghost", AttemptID: "g1", WorkerID: "w1", LeaseSeconds: 4, LeaseExpiresAt: start.Add(4 * time.Second)}
	fs.active["held"] = state.ActiveTask{TaskID: "held", AttemptID: "h1", WorkerID: "w1", LeaseSeconds: 4, LeaseExpiresAt: start.Add(4 * time.Second)}
	fs.mu.Unlock()
	m.enforce(ctx)
	if _, ok := m.Deadline("g1"); ok {
		t.Fatal("an unarmed attempt had a lease before adoption")
	}
	m.adopt(clk.Now())
	if d, ok := m.Deadline("g1"); !ok || !d.Equal(start.Add(5*time.Second)) {
		t.Fatalf("adopted deadline %v %v, want the state's plus grace", d, ok)
	}
	for range 3 { // the worker reports only "held"
		clk.Advance(2 * time.Second)
		m.Heartbeat("w1", []string{"held"})
		m.enforce(ctx)
	}
	got := fs.take()
	if len(got) != 1 {
		t.Fatalf("proposals %v, want the ghost lost", got)
	}
	if lost, ok := got[0].(command.LoseAttempt); !ok || lost.AttemptID != "g1" {
		t.Fatalf("proposal %#v, want g1 lost", got[0])
	}
	if _, held := fs.HeldAttempt("held", "w1"); !held {
		t.Fatal("the reported attempt was lost")
	}
}

// An attempt adopted after an outage, whose deadline in the state passed
// while there was no leader, gets what gaining leadership gives every
// lease: its length plus the grace, counted from the moment leadership
// was taken. It is not lost at once (the old floor was "now": lapsed at
// the next check).
func TestAdoptedAttemptsGetAFreshGraceFromTakingOffice(t *testing.T) {
	start := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	clk := clock.NewFake(start)
	fs := &fakeState{active: map[string]state.ActiveTask{}, workers: map[string]string{"w1": api.WorkerReady}}
	m := New(Config{Clock: clk, State: fs, Propose: fs.propose, Grace: 5 * time.Second, OfflineAfter: time.Hour})
	ctx := t.Context()
	m.rearm() // leadership taken at start

	// An attempt rearm did not see, its deadline set by the state a
	// minute before the outage ended.
	fs.mu.Lock()
	fs.active["old"] = state.ActiveTask{TaskID: "old", AttemptID: "o1", WorkerID: "w1", LeaseSeconds: 10, LeaseExpiresAt: start.Add(-time.Minute)}
	fs.mu.Unlock()
	clk.Advance(3 * time.Second)
	m.adopt(clk.Now())
	want := start.Add(10*time.Second + 5*time.Second)
	if d, ok := m.Deadline("o1"); !ok || !d.Equal(want) {
		t.Fatalf("adopted deadline %v %v, want %v (lease plus grace from taking office)", d, ok, want)
	}
	m.enforce(ctx)
	clk.Advance(want.Sub(clk.Now()))
	m.enforce(ctx)
	if got := fs.take(); len(got) != 0 {
		t.Fatalf("lost within the fresh grace: %v", got)
	}
	clk.Advance(time.Millisecond)
	m.enforce(ctx)
	if got := fs.take(); len(got) != 1 || got[0].(command.LoseAttempt).AttemptID != "o1" {
		t.Fatalf("proposals %v, want o1 lost once its fresh grace ran out", got)
	}
}

// LastSeen is a heartbeat this leader received, nothing else: the grace a
// new leader gives a ready worker's heartbeat deadline is not one. A
// worker that goes offline keeps the time it was last heard from.
func TestLastSeenIsOnlyAHeartbeatToThisLeader(t *testing.T) {
	start := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	clk := clock.NewFake(start)
	fs := &fakeState{active: map[string]state.ActiveTask{}, workers: map[string]string{"w1": api.WorkerReady, "w2": api.WorkerReady}}
	m := New(Config{Clock: clk, State: fs, Propose: fs.propose, Grace: 5 * time.Second, OfflineAfter: 10 * time.Second})
	ctx := t.Context()
	m.rearm()
	for _, w := range []string{"w1", "w2"} {
		if at, ok := m.LastSeen(w); ok {
			t.Fatalf("%s seen at %v before any heartbeat to this leader", w, at)
		}
	}
	clk.Advance(time.Second)
	beat := clk.Now()
	m.Heartbeat("w1", nil)
	if at, ok := m.LastSeen("w1"); !ok || !at.Equal(beat) {
		t.Fatalf("LastSeen(w1) = %v %v, want %v", at, ok, beat)
	}
	// w2, never heard, still has the grace on top of OfflineAfter: not
	// offline at 14 s, offline after 15 s; w1 goes at 11 s.
	clk.Advance(10*time.Second + time.Millisecond) // 11.001 s
	m.enforce(ctx)
	if got := fs.take(); len(got) != 1 || got[0].(command.SetWorkerStatus).WorkerID != "w1" {
		t.Fatalf("proposals %v, want w1 offline", got)
	}
	clk.Advance(3 * time.Second) // 14.001 s
	m.enforce(ctx)
	if got := fs.take(); len(got) != 0 {
		t.Fatalf("w2 went offline inside its grace: %v", got)
	}
	clk.Advance(time.Second) // 15.001 s
	m.enforce(ctx)
	if got := fs.take(); len(got) != 1 || got[0].(command.SetWorkerStatus).WorkerID != "w2" {
		t.Fatalf("proposals %v, want w2 offline", got)
	}
	if at, ok := m.LastSeen("w1"); !ok || !at.Equal(beat) {
		t.Fatalf("offline w1: LastSeen %v %v, want its last heartbeat %v", at, ok, beat)
	}
	if _, ok := m.LastSeen("w2"); ok {
		t.Fatal("w2 seen without a heartbeat")
	}
	clk.Advance(time.Hour)
	m.enforce(ctx)
	if got := fs.take(); len(got) != 0 {
		t.Fatalf("an offline worker was proposed offline again: %v", got)
	}
}

// A leader whose timers stop (its process paused or starved) for longer
// than a heartbeat interval loses nothing for that time: on its next tick
// every lease and heartbeat deadline gets a fresh grace, as on gaining
// leadership. Then a worker that still does not heartbeat loses its lease
// as usual, and ticks at their normal pace give no grace.
func TestAStalledLeaderGivesEveryLeaseAFreshGrace(t *testing.T) {
	start := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	clk := clock.NewFake(start)
	fs := &fakeState{
		active:  map[string]state.ActiveTask{"t1": {TaskID: "t1", AttemptID: "a1", WorkerID: "w1", LeaseSeconds: 10}, "t2": {TaskID: "t2", AttemptID: "a2", WorkerID: "w2", LeaseSeconds: 10}},
		workers: map[string]string{"w1": api.WorkerReady, "w2": api.WorkerReady},
	}
	const tick = 250 * time.Millisecond
	m := New(Config{Clock: clk, State: fs, Propose: fs.propose, Grace: 5 * time.Second, Tick: tick, HeartbeatInterval: 2 * time.Second, OfflineAfter: 10 * time.Second})
	ctx := t.Context()
	m.rearm()
	r := runState{lastTick: clk.Now(), lastAdopt: clk.Now()}
	m.Heartbeat("w1", []string{"t1"})
	m.Heartbeat("w2", []string{"t2"})
	heard, _ := m.LastSeen("w1")

	// A minute with no tick: every deadline (10 s) has long passed.
	clk.Advance(time.Minute)
	m.tick(ctx, &r)
	if got := fs.take(); len(got) != 0 {
		t.Fatalf("after a stall the manager proposed %v", got)
	}
	resumed := clk.Now()
	for _, a := range []string{"a1", "a2"} {
		if d, ok := m.Deadline(a); !ok || !d.Equal(resumed.Add(15*time.Second)) {
			t.Fatalf("%s deadline %v %v, want lease plus grace from the resume", a, d, ok)
		}
	}
	if at, ok := m.LastSeen("w1"); !ok || !at.Equal(heard) {
		t.Fatalf("LastSeen(w1) after the stall %v %v, want the heartbeat before it", at, ok)
	}

	// w1 heartbeats again, w2 stays silent: ticking at the normal pace,
	// nothing happens for lease plus grace after the resume; then w2's
	// lease lapses and it goes offline (grace plus OfflineAfter), and w1
	// keeps everything.
	for clk.Now().Sub(resumed) < 15*time.Second {
		if clk.Now().Sub(resumed)%(2*time.Second) == 0 {
			m.Heartbeat("w1", []string{"t1"})
		}
		clk.Advance(tick)
		m.tick(ctx, &r)
		if got := fs.take(); len(got) != 0 {
			t.Fatalf("%v after the resume: %v", clk.Now().Sub(resumed), got)
		}
	}
	clk.Advance(tick)
	m.tick(ctx, &r)
	got := fs.take()
	if len(got) != 2 || got[0].(command.LoseAttempt).AttemptID != "a2" || got[1].(command.SetWorkerStatus).WorkerID != "w2" {
		t.Fatalf("proposals %v, want a2 lost and w2 offline", got)
	}
}
