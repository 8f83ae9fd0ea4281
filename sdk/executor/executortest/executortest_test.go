package executortest_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/sdk/executor"
	"github.com/gpulayer/gpulayer/sdk/executor/executortest"
)

func TestFakeConforms(t *testing.T) {
	executortest.Run(t, executortest.FakeSpec())
}

// brokenCases are executors with one contract violation each, and the
// check that must catch it.
var brokenCases = []struct {
	name  string
	check string
	wrap  func(executor.Executor) executor.Executor
}{
	{"unknown_not_mapped", "unknown_task", func(e executor.Executor) executor.Executor {
		return &broken{Executor: e, wait: func(context.Context, string) (executor.Result, error) {
			return executor.Result{}, errors.New("not found")
		}}
	}},
	{"wrong_exit_code", "exit_code", func(e executor.Executor) executor.Executor {
		return &broken{Executor: e, wait: func(context.Context, string) (executor.Result, error) {
			return executor.Result{}, nil
		}}
	}},
	{"logs_lose_output", "print_wait_logs", func(e executor.Executor) executor.Executor {
		return &broken{Executor: e, logs: func(context.Context, string, func(executor.LogChunk) error) error {
			return nil
		}}
	}},
	{"logs_ignore_cancel", "logs_ctx_cancel", func(e executor.Executor) executor.Executor {
		return &broken{Executor: e, logs: func(_ context.Context, id string, send func(executor.LogChunk) error) error {
			return e.Logs(context.Background(), id, send)
		}}
	}},
	{"duplicate_allowed", "duplicate_start", func(e executor.Executor) executor.Executor {
		return &broken{Executor: e, start: func(ctx context.Context, task executor.Task) error {
			if err := e.Start(ctx, task); !errors.Is(err, executor.ErrDuplicateTask) {
				return err
			}
			return nil
		}}
	}},
}

const brokenEnv = "EXECUTORTEST_RUN_BROKEN"

// TestBrokenHelper runs the harness against the broken executors. It is
// only run as a child process of TestHarnessCatchesBrokenExecutor, which
// expects it to fail.
func TestBrokenHelper(t *testing.T) {
	if os.Getenv(brokenEnv) == "" {
		t.Skip("run by TestHarnessCatchesBrokenExecutor")
	}
	for _, bc := range brokenCases {
		t.Run(bc.name, func(t *testing.T) {
			spec := executortest.FakeSpec()
			spec.Timeout = 2 * time.Second
			executortest.RunChecks(t, spec, func() executor.Executor { return bc.wrap(executortest.NewFake()) })
		})
	}
}

// TestHarnessCatchesBrokenExecutor requires each broken executor to fail
// the check aimed at its violation.
func TestHarnessCatchesBrokenExecutor(t *testing.T) {
	for _, bc := range brokenCases {
		t.Run(bc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0],
				"-test.run=^TestBrokenHelper$/^"+bc.name+"$/^"+bc.check+"$", "-test.v")
			cmd.Env = append(os.Environ(), brokenEnv+"=1")
			out, err := cmd.CombinedOutput()
			var exitErr *exec.ExitError
			if !errors.As(err, &exitErr) {
				t.Fatalf("helper run: %v, want a failing exit\n%s", err, out)
			}
			want := "--- FAIL: TestBrokenHelper/" + bc.name + "/" + bc.check
			if !strings.Contains(string(out), want) {
				t.Errorf("check %s did not catch %s; output:\n%s", bc.check, bc.name, out)
			}
		})
	}
}

// broken overrides some methods of an executor.
type broken struct {
	executor.Executor
	start func(context.Context, executor.Task) error
	wait  func(context.Context, string) (executor.Result, error)
	logs  func(context.Context, string, func(executor.LogChunk) error) error
}

func (b *broken) Start(ctx context.Context, task executor.Task) error {
	if b.start != nil {
		return b.start(ctx, task)
	}
	return b.Executor.Start(ctx, task)
}

func (b *broken) Wait(ctx context.Context, id string) (executor.Result, error) {
	if b.wait != nil {
		return b.wait(ctx, id)
	}
	return b.Executor.Wait(ctx, id)
}

func (b *broken) Logs(ctx context.Context, id string, send func(executor.LogChunk) error) error {
	if b.logs != nil {
		return b.logs(ctx, id, send)
	}
	return b.Executor.Logs(ctx, id, send)
}
