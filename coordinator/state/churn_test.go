package state

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// appliedLog applies commands to a store and records them in the order the
// store applied them, as a Raft log would.
type appliedLog struct {
	mu      sync.Mutex
	s       *Store
	entries []command.Command
	results []Result
}

func (l *appliedLog) apply(c command.Command) Result {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.s.Apply(c).(Result)
	l.entries = append(l.entries, c)
	l.results = append(l.results, r)
	return r
}

// Seed 002 §6.2: while group membership changes, concurrent acquires
// (match outside the write lock, then assign through Apply, as the
// scheduler does) never hand a task targeting a group to a worker that is
// not in it at the moment the assignment applies. The check replays the
// applied log in order, so membership at each assignment is exact.
func TestGroupResolutionUnderChurn(t *testing.T) {
	const tasks = 300
	s := New()
	l := &appliedLog{s: s}
	setup := []command.Command{register("w1"), register("w2"), register("w3"), register("w4"), register("outsider"),
		mkGroup("sub", wm("w2")), mkGroup("pool", wm("w1"), gm("sub")),
		targeted("j", tasks, &command.Target{Kind: api.TargetGroup, ID: "pool"}, "")}
	for _, c := range setup {
		if r := l.apply(c); r.Err() != nil {
			t.Fatal(r.Err())
		}
	}
	churn := []command.Command{
		addM("pool", wm("w3")), rmM("sub", wm("w2")), addM("sub", wm("w4")), rmM("pool", gm("sub")),
		rmM("pool", wm("w1")), addM("pool", gm("sub")), rmM("pool", wm("w3")), addM("sub", wm("w2")),
		addM("pool", wm("w1")), rmM("sub", wm("w4")),
	}
	var done sync.WaitGroup
	churnDone := make(chan struct{})
	done.Add(1)
	go func() {
		defer done.Done()
		defer close(churnDone)
		for i := range 40 {
			for _, c := range churn {
				if r := l.apply(c); r.Err() != nil {
					t.Errorf("churn %d: %v", i, r.Err())
					return
				}
			}
		}
	}()
	var refused sync.Map
	for _, w := range []string{"w1", "w2", "w3", "w4", "outsider"} {
		done.Add(1)
		go func() {
			defer done.Done()
			for n := 0; ; n++ {
				final := false
				select {
				case <-churnDone:
					final = true // membership no longer changes
				default:
				}
				changed := s.PendingChanged()
				cand, ok, err := s.Match(w, "", nil)
				if err != nil {
					t.Error(err)
					return
				}
				if !ok {
					if final {
						return
					}
					select {
					case <-changed:
					case <-churnDone:
					}
					continue
				}
				att := fmt.Sprintf("%s-%d", w, n)
				r := l.apply(command.AssignTask{TaskID: cand.TaskID, WorkerID: w, AttemptID: att, Now: at(n)})
				if r.Err() != nil {
					if !errors.Is(r.Err(), ErrConflict) {
						t.Error(r.Err())
						return
					}
					refused.Store(att, true)
					continue
				}
				if r := l.apply(command.FinishTask{TaskID: cand.TaskID, WorkerID: w, AttemptID: att, Now: at(n)}); r.Err() != nil {
					t.Error(r.Err())
					return
				}
			}
		}()
	}
	done.Wait()

	// The churn ends with w1 in pool, so every task has run.
	for i := range tasks {
		if task, _ := s.Task(fmt.Sprintf("j-%d", i)); task.State != api.TaskSucceeded {
			t.Fatalf("task %d ended %s", i, task.State)
		}
	}
	replay := New()
	assigned := map[string]int{}
	for i, c := range l.entries {
		if a, ok := c.(command.AssignTask); ok && l.results[i].Err() == nil {
			if !replay.InGroup(a.WorkerID, "pool") {
				t.Fatalf("entry %d: task %s went to %s, which was not in pool then", i, a.TaskID, a.WorkerID)
			}
			assigned[a.WorkerID]++
		}
		if r := replay.Apply(c).(Result); (r.Err() == nil) != (l.results[i].Err() == nil) {
			t.Fatalf("entry %d: replay disagrees: %v vs %v", i, r.Err(), l.results[i].Err())
		}
	}
	if assigned["outsider"] != 0 {
		t.Fatalf("outsider ran %d tasks", assigned["outsider"])
	}
	n := 0
	refused.Range(func(_, _ any) bool { n++; return true })
	t.Logf("assignments per worker %v; %d refused by the state machine after membership changed", assigned, n)
}
