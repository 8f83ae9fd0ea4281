package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/gpulayer/gpulayer/sdk/executor"
	"github.com/gpulayer/gpulayer/sdk/executor/logbuf"
)

// Config is the echo executor's task config.
type Config struct {
	Message  string `json:"message"`
	Repeat   *int   `json:"repeat,omitempty"`
	Interval string `json:"interval,omitempty"`
	ExitCode int    `json:"exit_code,omitempty"`
}

// Echo is the executor. Each task runs in its own goroutine.
type Echo struct {
	mu    sync.Mutex
	tasks map[string]*task
}

type task struct {
	logs   *logbuf.Buffer
	stop   chan struct{}
	once   sync.Once
	done   chan struct{}
	result executor.Result
}

var _ executor.Executor = (*Echo)(nil)

// New returns an Echo executor.
func New() *Echo {
	return &Echo{tasks: make(map[string]*task)}
}

// Info implements executor.Executor.
func (e *Echo) Info(context.Context) (executor.Info, error) {
	return executor.Info{Name: "echo", Version: "1.0.0"}, nil
}

func parseConfig(raw []byte) (Config, time.Duration, int, error) {
	var cfg Config
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		return cfg, 0, 0, fmt.Errorf("%w: echo config: %v", executor.ErrInvalidConfig, err)
	}
	repeat := 1
	if cfg.Repeat != nil {
		repeat = *cfg.Repeat
	}
	if repeat < -1 {
		return cfg, 0, 0, fmt.Errorf("%w: echo config: repeat must be -1 (forever) or more, not %d", executor.ErrInvalidConfig, repeat)
	}
	var interval time.Duration
	if cfg.Interval != "" {
		d, err := time.ParseDuration(cfg.Interval)
		if err != nil || d < 0 {
			return cfg, 0, 0, fmt.Errorf("%w: echo config: interval %q is not a duration like \"500ms\"", executor.ErrInvalidConfig, cfg.Interval)
		}
		interval = d
	}
	return cfg, interval, repeat, nil
}

// Start implements executor.Executor.
func (e *Echo) Start(_ context.Context, t executor.Task) error {
	cfg, interval, repeat, err := parseConfig(t.Config)
	if err != nil {
		return fmt.Errorf("echo: start task %s: %w", t.ID, err)
	}
	line := []byte(os.Expand(cfg.Message, func(k string) string { return t.Env[k] }) + "\n")

	e.mu.Lock()
	defer e.mu.Unlock()
	if _, ok := e.tasks[t.ID]; ok {
		return fmt.Errorf("echo: start task %s: %w", t.ID, executor.ErrDuplicateTask)
	}
	tk := &task{logs: logbuf.New(0), stop: make(chan struct{}), done: make(chan struct{})}
	e.tasks[t.ID] = tk
	go tk.run(line, repeat, interval, cfg.ExitCode)
	return nil
}

// run prints the lines, then ends the task, unless stopped first.
func (tk *task) run(line []byte, repeat int, interval time.Duration, exitCode int) {
	defer close(tk.done)
	defer tk.logs.Close()
	for i := 0; repeat < 0 || i < repeat; i++ {
		if i > 0 && interval > 0 {
			timer := time.NewTimer(interval)
			select {
			case <-timer.C:
			case <-tk.stop:
				timer.Stop()
			}
		}
		select {
		case <-tk.stop:
			tk.result = executor.Result{ExitCode: 143, Reason: "stopped"}
			return
		default:
		}
		tk.logs.Write("stdout", line)
	}
	tk.result = executor.Result{ExitCode: exitCode}
}

func (e *Echo) task(id string) (*task, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	tk, ok := e.tasks[id]
	if !ok {
		return nil, fmt.Errorf("echo: task %s: %w", id, executor.ErrUnknownTask)
	}
	return tk, nil
}

// Wait implements executor.Executor.
func (e *Echo) Wait(ctx context.Context, id string) (executor.Result, error) {
	tk, err := e.task(id)
	if err != nil {
		return executor.Result{}, err
	}
	select {
	case <-tk.done:
		return tk.result, nil
	case <-ctx.Done():
		return executor.Result{}, ctx.Err()
	}
}

// Stop implements executor.Executor. Echo needs no grace period: it stops
// between two lines.
func (e *Echo) Stop(ctx context.Context, id string, _ time.Duration) error {
	tk, err := e.task(id)
	if err != nil {
		return err
	}
	tk.once.Do(func() { close(tk.stop) })
	select {
	case <-tk.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Logs implements executor.Executor.
func (e *Echo) Logs(ctx context.Context, id string, send func(executor.LogChunk) error) error {
	tk, err := e.task(id)
	if err != nil {
		return err
	}
	return tk.logs.Follow(ctx, send)
}
