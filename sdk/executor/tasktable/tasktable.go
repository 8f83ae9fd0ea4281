// Package tasktable keeps an executor's tasks by attempt id, as the
// executor contract asks (sdk/executor): an id is started once, Wait, Stop
// and Logs find a running task and the last ended ones, older ended tasks
// are forgotten, and after Close no task starts. The built-in executors
// share it.
package tasktable

import (
	"context"
	"fmt"
	"sync"

	"github.com/gpulayer/gpulayer/sdk/executor"
)

// Task is what the table needs of a task: a channel closed once it ended
// and its result is set.
type Task interface {
	Done() <-chan struct{}
	Result() executor.Result
}

// Table holds the tasks starting, running and the last ended ones. It is
// safe for concurrent use.
type Table[T Task] struct {
	name     string // the executor's, in errors
	maxEnded int
	mu       sync.Mutex
	tasks    map[string]T
	pending  map[string]struct{} // ids whose Start is in progress
	ended    []string            // ended task ids, oldest first
	closed   error               // set by Close: what Reserve answers
}

// New returns the table of the executor called name, remembering at most
// maxEnded ended tasks (at least one).
func New[T Task](name string, maxEnded int) *Table[T] {
	return &Table[T]{name: name, maxEnded: max(maxEnded, 1), tasks: map[string]T{}, pending: map[string]struct{}{}}
}

// Reserve claims id for a Start in progress: executor.ErrDuplicateTask
// for an id starting or known, Close's error once it ran.
func (t *Table[T]) Reserve(id string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed != nil {
		return t.closed
	}
	_, known := t.tasks[id]
	_, starting := t.pending[id]
	if known || starting {
		return executor.ErrDuplicateTask
	}
	t.pending[id] = struct{}{}
	return nil
}

// Settle ends id's reservation; started records tk under it. It reports
// whether Close ran meanwhile (a started task must then be ended too).
func (t *Table[T]) Settle(id string, tk T, started bool) (closed bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.pending, id)
	if started {
		t.tasks[id] = tk
	}
	return t.closed != nil
}

// Ended records id as ended and forgets the oldest ended tasks beyond
// the table's limit.
func (t *Table[T]) Ended(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.ended = append(t.ended, id)
	for len(t.ended) > t.maxEnded {
		delete(t.tasks, t.ended[0])
		t.ended[0] = ""
		t.ended = t.ended[1:]
	}
}

// Get returns the task id names, or an error wrapping
// executor.ErrUnknownTask.
func (t *Table[T]) Get(id string) (T, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	tk, ok := t.tasks[id]
	if !ok {
		return tk, fmt.Errorf("%s: task %s: %w", t.name, id, executor.ErrUnknownTask)
	}
	return tk, nil
}

// Wait returns the result of the task id names once it ended (Get's
// error for an unknown one), or ctx's error.
func (t *Table[T]) Wait(ctx context.Context, id string) (executor.Result, error) {
	tk, err := t.Get(id)
	if err != nil {
		return executor.Result{}, err
	}
	return Wait(ctx, tk)
}

// Active reports whether id is starting or known (running or ended
// recently).
func (t *Table[T]) Active(id string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	_, known := t.tasks[id]
	_, starting := t.pending[id]
	return known || starting
}

// Close makes every later Reserve fail with err and returns the tasks
// known now.
func (t *Table[T]) Close(err error) []T {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = err
	out := make([]T, 0, len(t.tasks))
	for _, tk := range t.tasks {
		out = append(out, tk)
	}
	return out
}

// Wait returns tk's result once it ended, or ctx's error.
func Wait[T Task](ctx context.Context, tk T) (executor.Result, error) {
	select {
	case <-tk.Done():
		return tk.Result(), nil
	case <-ctx.Done():
		return executor.Result{}, ctx.Err()
	}
}

// Ended waits for tk to end, or returns ctx's error.
func Ended[T Task](ctx context.Context, tk T) error {
	select {
	case <-tk.Done():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
