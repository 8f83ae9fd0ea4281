// Package executortest is a conformance harness for executor plugins. A
// plugin author describes how to make a few kinds of task with a Spec and
// calls Run from a test; Run checks the executor.Executor contract both
// in-process and across go-plugin's real gRPC transport (the same adapters
// the agent uses), so mapping bugs and ordering bugs show up before the
// plugin ever meets an agent.
//
//	func TestConformance(t *testing.T) {
//		executortest.Run(t, executortest.Spec{
//			New:   func() executor.Executor { return myexec.New() },
//			Print: func(lines []string) []byte { ... },
//			Block: func() []byte { ... },
//		})
//	}
package executortest

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/sdk/executor"
)

// Spec tells the harness how to drive the executor under test.
type Spec struct {
	// New returns a fresh executor. Required. Each check gets its own.
	New func() executor.Executor
	// Print returns a config for a task that writes each line, followed
	// by "\n", to stdout in order and then exits with code 0. Required.
	Print func(lines []string) []byte
	// Block returns a config for a task that runs until it is stopped.
	// Required.
	Block func() []byte
	// Exit returns a config for a task that exits with code (1 to 125).
	// Optional: nil skips the exit code checks.
	Exit func(code int) []byte
	// PrintEnv returns a config for a task that writes the value of the
	// environment variable key, followed by "\n", to stdout. Optional:
	// nil skips the environment checks.
	PrintEnv func(key string) []byte
	// Invalid is a config that Start must refuse with ErrInvalidConfig.
	// Optional: nil skips the check.
	Invalid []byte
	// Timeout bounds each check; zero means 30 seconds.
	Timeout time.Duration
}

// Run checks impl's conformance to the executor contract, first calling
// it directly ("in_process") and then through go-plugin's gRPC transport
// ("grpc").
func Run(t *testing.T, spec Spec) {
	t.Helper()
	if spec.New == nil || spec.Print == nil || spec.Block == nil {
		t.Fatal("executortest: Spec.New, Spec.Print and Spec.Block are required")
	}
	t.Run("in_process", func(t *testing.T) {
		RunChecks(t, spec, spec.New)
	})
	t.Run("grpc", func(t *testing.T) {
		RunChecks(t, spec, func() executor.Executor { return Connect(t, spec.New()) })
	})
}

// RunChecks runs every check against executors made by newExec, which may
// differ from spec.New (to test an executor reached some other way, such
// as a plugin process the test launched itself).
func RunChecks(t *testing.T, spec Spec, newExec func() executor.Executor) {
	t.Helper()
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			timeout := spec.Timeout
			if timeout <= 0 {
				timeout = 30 * time.Second
			}
			ctx, cancel := context.WithTimeout(t.Context(), timeout)
			defer cancel()
			c.run(ctx, t, &harness{spec: spec, exec: newExec()})
		})
	}
}

// harness is what a check gets: the spec and a fresh executor.
type harness struct {
	spec Spec
	exec executor.Executor
}

var taskSeq atomic.Uint64

// NewTask returns a task with a fresh unique ID, the given config and a
// scratch WorkDir.
func NewTask(t testing.TB, config []byte) executor.Task {
	t.Helper()
	n := taskSeq.Add(1)
	return executor.Task{
		ID:      fmt.Sprintf("attempt-%d-%d", time.Now().UnixNano(), n),
		TaskID:  fmt.Sprintf("task-%d", n),
		JobID:   "job-executortest",
		Config:  config,
		Env:     map[string]string{},
		WorkDir: t.TempDir(),
	}
}

// start starts task and registers a cleanup that stops it.
func (h *harness) start(ctx context.Context, t *testing.T, task executor.Task) {
	t.Helper()
	if err := h.exec.Start(ctx, task); err != nil {
		t.Fatalf("Start(%s): %v", task.ID, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = h.exec.Stop(ctx, task.ID, 0)
	})
}
