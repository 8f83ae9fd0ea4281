package tasktable

import (
	"context"
	"errors"
	"testing"

	"github.com/gpulayer/gpulayer/sdk/executor"
)

type fakeTask struct {
	done chan struct{}
	res  executor.Result
}

func (f *fakeTask) Done() <-chan struct{}   { return f.done }
func (f *fakeTask) Result() executor.Result { return f.res }

// An id starts once; a failed start frees it; ended tasks are found until
// the limit pushes them out; Close refuses later starts with its error
// and hands back the tasks; Wait returns the result once done, or ctx's
// error.
func TestTable(t *testing.T) {
	tb := New[*fakeTask]("fake", 2)
	if err := tb.Reserve("a"); err != nil {
		t.Fatal(err)
	}
	if err := tb.Reserve("a"); !errors.Is(err, executor.ErrDuplicateTask) {
		t.Fatalf("reserving a starting id: %v", err)
	}
	tb.Settle("a", nil, false)
	if tb.Active("a") {
		t.Fatal("a failed start is still active")
	}
	tasks := map[string]*fakeTask{}
	for _, id := range []string{"a", "b", "c"} {
		tk := &fakeTask{done: make(chan struct{}), res: executor.Result{ExitCode: len(id)}}
		tasks[id] = tk
		if err := tb.Reserve(id); err != nil {
			t.Fatal(err)
		}
		if closed := tb.Settle(id, tk, true); closed {
			t.Fatal("closed before Close")
		}
	}
	if err := tb.Reserve("b"); !errors.Is(err, executor.ErrDuplicateTask) {
		t.Fatalf("reserving a running id: %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := Wait(ctx, tasks["a"]); !errors.Is(err, context.Canceled) {
		t.Fatalf("wait on a running task with ctx done: %v", err)
	}
	for _, id := range []string{"a", "b", "c"} {
		close(tasks[id].done)
		tb.Ended(id)
	}
	if _, err := tb.Get("a"); !errors.Is(err, executor.ErrUnknownTask) {
		t.Fatalf("the oldest ended task beyond the limit: %v", err)
	}
	tk, err := tb.Get("c")
	if err != nil {
		t.Fatal(err)
	}
	if res, err := tb.Wait(t.Context(), "c"); err != nil || res.ExitCode != 1 {
		t.Fatalf("wait: %+v %v", res, err)
	}
	if err := Ended(t.Context(), tk); err != nil {
		t.Fatal(err)
	}
	stop := errors.New("closed")
	if got := tb.Close(stop); len(got) != 2 {
		t.Fatalf("Close handed back %d tasks, want 2", len(got))
	}
	if err := tb.Reserve("d"); !errors.Is(err, stop) {
		t.Fatalf("reserve after Close: %v", err)
	}
}
