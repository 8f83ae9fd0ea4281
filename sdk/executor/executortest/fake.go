package executortest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/gpulayer/gpulayer/sdk/executor"
	"github.com/gpulayer/gpulayer/sdk/executor/logbuf"
)

// FakeConfig is the task config the Fake executor understands.
type FakeConfig struct {
	// Stdout and Stderr are lines written, each followed by "\n".
	Stdout []string `json:"stdout,omitempty"`
	Stderr []string `json:"stderr,omitempty"`
	// PrintEnv names a variable of Task.Env whose value is written to
	// stdout, followed by "\n", after the Stdout lines.
	PrintEnv string `json:"print_env,omitempty"`
	// ExitCode is the task's exit code when it ends by itself.
	ExitCode int `json:"exit_code,omitempty"`
	// Output is returned as Result.Output.
	Output json.RawMessage `json:"output,omitempty"`
	// Block keeps the task running, after its output, until Stop.
	Block bool `json:"block,omitempty"`
}

// JSON encodes c, for use as Task.Config.
func (c FakeConfig) JSON() []byte {
	b, err := json.Marshal(c)
	if err != nil {
		panic(err) // FakeConfig always encodes
	}
	return b
}

// Fake is an in-memory executor with real behaviour, for tests of code
// that drives executors (and as the harness's own reference). Its tasks
// are described by FakeConfig; a stopped task ends with exit code 143 and
// reason "stopped". It passes Run.
type Fake struct {
	mu      sync.Mutex
	tasks   map[string]*fakeTask
	started []executor.Task
}

type fakeTask struct {
	logs   *logbuf.Buffer
	done   chan struct{}
	once   sync.Once
	result executor.Result
}

var _ executor.Executor = (*Fake)(nil)

// NewFake returns an empty Fake.
func NewFake() *Fake {
	return &Fake{tasks: make(map[string]*fakeTask)}
}

// FakeSpec returns a Spec for the Fake, for Run.
func FakeSpec() Spec {
	return Spec{
		New:      func() executor.Executor { return NewFake() },
		Print:    func(lines []string) []byte { return FakeConfig{Stdout: lines}.JSON() },
		Block:    func() []byte { return FakeConfig{Block: true}.JSON() },
		Exit:     func(code int) []byte { return FakeConfig{ExitCode: code}.JSON() },
		PrintEnv: func(key string) []byte { return FakeConfig{PrintEnv: key}.JSON() },
		Invalid:  []byte(`{"no_such_field": true}`),
	}
}

// Started returns the tasks started so far, in order.
func (f *Fake) Started() []executor.Task {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]executor.Task(nil), f.started...)
}

// Info implements executor.Executor.
func (f *Fake) Info(context.Context) (executor.Info, error) {
	return executor.Info{Name: "fake", Version: "0"}, nil
}

// Start implements executor.Executor.
func (f *Fake) Start(_ context.Context, task executor.Task) error {
	var cfg FakeConfig
	dec := json.NewDecoder(bytes.NewReader(task.Config))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		return fmt.Errorf("fake: task %s: %w: %v", task.ID, executor.ErrInvalidConfig, err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.tasks[task.ID]; ok {
		return fmt.Errorf("fake: task %s: %w", task.ID, executor.ErrDuplicateTask)
	}
	ft := &fakeTask{logs: logbuf.New(0), done: make(chan struct{})}
	f.tasks[task.ID] = ft
	f.started = append(f.started, task)
	for _, l := range cfg.Stdout {
		ft.logs.Write("stdout", []byte(l+"\n"))
	}
	for _, l := range cfg.Stderr {
		ft.logs.Write("stderr", []byte(l+"\n"))
	}
	if cfg.PrintEnv != "" {
		ft.logs.Write("stdout", []byte(task.Env[cfg.PrintEnv]+"\n"))
	}
	if !cfg.Block {
		ft.end(executor.Result{ExitCode: cfg.ExitCode, Output: cfg.Output})
	}
	return nil
}

func (ft *fakeTask) end(res executor.Result) {
	ft.once.Do(func() {
		ft.result = res
		ft.logs.Close()
		close(ft.done)
	})
}

func (f *Fake) task(id string) (*fakeTask, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ft, ok := f.tasks[id]
	if !ok {
		return nil, fmt.Errorf("fake: task %s: %w", id, executor.ErrUnknownTask)
	}
	return ft, nil
}

// Wait implements executor.Executor.
func (f *Fake) Wait(ctx context.Context, id string) (executor.Result, error) {
	ft, err := f.task(id)
	if err != nil {
		return executor.Result{}, err
	}
	select {
	case <-ft.done:
		return ft.result, nil
	case <-ctx.Done():
		return executor.Result{}, ctx.Err()
	}
}

// Stop implements executor.Executor. The fake ends at once, whatever the
// grace period.
func (f *Fake) Stop(_ context.Context, id string, _ time.Duration) error {
	ft, err := f.task(id)
	if err != nil {
		return err
	}
	ft.end(executor.Result{ExitCode: 143, Reason: "stopped"})
	return nil
}

// Logs implements executor.Executor.
func (f *Fake) Logs(ctx context.Context, id string, send func(executor.LogChunk) error) error {
	ft, err := f.task(id)
	if err != nil {
		return err
	}
	return ft.logs.Follow(ctx, send)
}
