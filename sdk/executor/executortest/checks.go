package executortest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/sdk/executor"
)

// check is one conformance check.
type check struct {
	name string
	run  func(ctx context.Context, t *testing.T, h *harness)
}

var checks = []check{
	{"info", checkInfo},
	{"print_wait_logs", checkPrintWaitLogs},
	{"logs_follow_live", checkLogsFollowLive},
	{"exit_code", checkExitCode},
	{"stop", checkStop},
	{"stop_releases_waiters", checkStopReleasesWaiters},
	{"unknown_task", checkUnknownTask},
	{"duplicate_start", checkDuplicateStart},
	{"invalid_config", checkInvalidConfig},
	{"logs_ctx_cancel", checkLogsCancel},
	{"logs_send_error", checkLogsSendError},
	{"concurrent_tasks", checkConcurrent},
	{"env", checkEnv},
}

// numbered returns n distinct lines with the given prefix.
func numbered(prefix string, n int) []string {
	lines := make([]string, n)
	for i := range lines {
		lines[i] = fmt.Sprintf("%s line %04d", prefix, i)
	}
	return lines
}

func joinLines(lines []string) string {
	return strings.Join(lines, "\n") + "\n"
}

func checkInfo(ctx context.Context, t *testing.T, h *harness) {
	info, err := h.exec.Info(ctx)
	if err != nil {
		t.Fatalf("Info: %v", err)
	}
	if info.Name == "" {
		t.Errorf("Info returned an empty Name: %+v", info)
	}
}

func checkPrintWaitLogs(ctx context.Context, t *testing.T, h *harness) {
	lines := numbered("print", 50)
	task := NewTask(t, h.spec.Print(lines))
	h.start(ctx, t, task)

	res, err := h.exec.Wait(ctx, task.ID)
	if err != nil {
		t.Fatalf("Wait: %v", err)
	}
	if res.ExitCode != 0 {
		t.Errorf("Wait: exit code %d (reason %q), want 0", res.ExitCode, res.Reason)
	}
	again, err := h.exec.Wait(ctx, task.ID)
	if err != nil {
		t.Fatalf("second Wait: %v", err)
	}
	if again.ExitCode != res.ExitCode || again.Reason != res.Reason || string(again.Output) != string(res.Output) {
		t.Errorf("second Wait = %+v, first = %+v; want the same result", again, res)
	}

	// After the end, Logs replays from the start, every time.
	for i := range 2 {
		out, err := Collect(ctx, h.exec, task.ID)
		if err != nil {
			t.Fatalf("Logs #%d after end: %v", i+1, err)
		}
		if got, want := out.Stdout(), joinLines(lines); got != want {
			t.Errorf("Logs #%d stdout:\n%q\nwant:\n%q", i+1, got, want)
		}
	}
}

func checkLogsFollowLive(ctx context.Context, t *testing.T, h *harness) {
	lines := numbered("live", 2000)
	task := NewTask(t, h.spec.Print(lines))
	h.start(ctx, t, task)

	// Logs started while the task may still run must follow it to the
	// end and deliver everything in order.
	type logsResult struct {
		out *Output
		err error
	}
	done := make(chan logsResult, 1)
	go func() {
		out, err := Collect(ctx, h.exec, task.ID)
		done <- logsResult{out, err}
	}()
	if _, err := h.exec.Wait(ctx, task.ID); err != nil {
		t.Fatalf("Wait: %v", err)
	}
	var r logsResult
	select {
	case r = <-done:
	case <-ctx.Done():
		t.Fatal("Logs did not return after the task ended")
	}
	if r.err != nil {
		t.Fatalf("Logs: %v", r.err)
	}
	if got, want := r.out.Stdout(), joinLines(lines); got != want {
		t.Errorf("Logs stdout has %d bytes, want %d; output out of order or incomplete", len(got), len(want))
	}
}

func checkExitCode(ctx context.Context, t *testing.T, h *harness) {
	if h.spec.Exit == nil {
		t.Skip("Spec.Exit not set")
	}
	for _, code := range []int{1, 7, 42} {
		task := NewTask(t, h.spec.Exit(code))
		h.start(ctx, t, task)
		res, err := h.exec.Wait(ctx, task.ID)
		if err != nil {
			t.Fatalf("Wait: %v", err)
		}
		if res.ExitCode != code {
			t.Errorf("Exit(%d): Wait exit code %d (reason %q)", code, res.ExitCode, res.Reason)
		}
	}
}

func checkStop(ctx context.Context, t *testing.T, h *harness) {
	task := NewTask(t, h.spec.Block())
	h.start(ctx, t, task)

	if err := h.exec.Stop(ctx, task.ID, 5*time.Second); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	// Stop returns once the task has ended, so Wait answers at once.
	waitCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	res, err := h.exec.Wait(waitCtx, task.ID)
	if err != nil {
		t.Fatalf("Wait after Stop: %v", err)
	}
	if res.ExitCode == 0 && res.Reason == "" {
		t.Errorf("stopped task reported success with no reason: %+v", res)
	}
	// Stopping an ended task is not an error.
	if err := h.exec.Stop(ctx, task.ID, time.Second); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	if _, err := Collect(waitCtx, h.exec, task.ID); err != nil {
		t.Errorf("Logs after Stop: %v", err)
	}
}

func checkStopReleasesWaiters(ctx context.Context, t *testing.T, h *harness) {
	task := NewTask(t, h.spec.Block())
	h.start(ctx, t, task)

	var wg sync.WaitGroup
	errs := make(chan error, 2)
	wg.Add(2)
	go func() {
		defer wg.Done()
		_, err := h.exec.Wait(ctx, task.ID)
		errs <- err
	}()
	go func() {
		defer wg.Done()
		_, err := Collect(ctx, h.exec, task.ID)
		errs <- err
	}()
	if err := h.exec.Stop(ctx, task.ID, 5*time.Second); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("Wait or Logs blocked on a stopped task returned %v, want nil", err)
		}
	}
}

func checkUnknownTask(ctx context.Context, t *testing.T, h *harness) {
	const id = "executortest-no-such-task"
	if _, err := h.exec.Wait(ctx, id); !errors.Is(err, executor.ErrUnknownTask) {
		t.Errorf("Wait(unknown) = %v, want ErrUnknownTask", err)
	}
	if err := h.exec.Stop(ctx, id, time.Second); !errors.Is(err, executor.ErrUnknownTask) {
		t.Errorf("Stop(unknown) = %v, want ErrUnknownTask", err)
	}
	if err := h.exec.Logs(ctx, id, func(executor.LogChunk) error { return nil }); !errors.Is(err, executor.ErrUnknownTask) {
		t.Errorf("Logs(unknown) = %v, want ErrUnknownTask", err)
	}
}

func checkDuplicateStart(ctx context.Context, t *testing.T, h *harness) {
	running := NewTask(t, h.spec.Block())
	h.start(ctx, t, running)
	if err := h.exec.Start(ctx, running); !errors.Is(err, executor.ErrDuplicateTask) {
		t.Errorf("Start of a running id = %v, want ErrDuplicateTask", err)
	}

	ended := NewTask(t, h.spec.Print([]string{"once"}))
	h.start(ctx, t, ended)
	if _, err := h.exec.Wait(ctx, ended.ID); err != nil {
		t.Fatalf("Wait: %v", err)
	}
	if err := h.exec.Start(ctx, ended); !errors.Is(err, executor.ErrDuplicateTask) {
		t.Errorf("Start of an ended id = %v, want ErrDuplicateTask", err)
	}
	// The refused start must not disturb the original run.
	out, err := Collect(ctx, h.exec, ended.ID)
	if err != nil {
		t.Fatalf("Logs: %v", err)
	}
	if got := out.Stdout(); got != "once\n" {
		t.Errorf("stdout after refused duplicate = %q, want %q", got, "once\n")
	}
}

func checkInvalidConfig(ctx context.Context, t *testing.T, h *harness) {
	if h.spec.Invalid == nil {
		t.Skip("Spec.Invalid not set")
	}
	task := NewTask(t, h.spec.Invalid)
	err := h.exec.Start(ctx, task)
	if !errors.Is(err, executor.ErrInvalidConfig) {
		t.Fatalf("Start(invalid config) = %v, want ErrInvalidConfig", err)
	}
	if err.Error() == executor.ErrInvalidConfig.Error() {
		t.Errorf("Start(invalid config) = %q: say what is wrong with the config", err)
	}
	if _, err := h.exec.Wait(ctx, task.ID); !errors.Is(err, executor.ErrUnknownTask) {
		t.Errorf("Wait after refused Start = %v, want ErrUnknownTask", err)
	}
}

func checkLogsCancel(ctx context.Context, t *testing.T, h *harness) {
	task := NewTask(t, h.spec.Block())
	h.start(ctx, t, task)

	logsCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- h.exec.Logs(logsCtx, task.ID, func(executor.LogChunk) error { return nil }) }()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Logs after cancel = %v, want context.Canceled", err)
		}
	case <-ctx.Done():
		t.Fatal("Logs did not return after its context was cancelled")
	}
}

func checkLogsSendError(ctx context.Context, t *testing.T, h *harness) {
	task := NewTask(t, h.spec.Print(numbered("send", 10)))
	h.start(ctx, t, task)
	if _, err := h.exec.Wait(ctx, task.ID); err != nil {
		t.Fatalf("Wait: %v", err)
	}
	errSend := errors.New("executortest: send refused")
	calls := 0
	err := h.exec.Logs(ctx, task.ID, func(executor.LogChunk) error {
		calls++
		return errSend
	})
	if !errors.Is(err, errSend) {
		t.Errorf("Logs with failing send = %v, want send's error", err)
	}
	if calls != 1 {
		t.Errorf("send called %d times after it failed, want 1 call", calls)
	}
}

func checkConcurrent(ctx context.Context, t *testing.T, h *harness) {
	const n = 8
	tasks := make([]executor.Task, n)
	want := make([]string, n)
	for i := range tasks {
		lines := numbered(fmt.Sprintf("task%d", i), 200)
		want[i] = joinLines(lines)
		tasks[i] = NewTask(t, h.spec.Print(lines))
	}
	var wg sync.WaitGroup
	for i, task := range tasks {
		wg.Go(func() {
			if err := h.exec.Start(ctx, task); err != nil {
				t.Errorf("Start #%d: %v", i, err)
				return
			}
			out, err := Collect(ctx, h.exec, task.ID)
			if err != nil {
				t.Errorf("Logs #%d: %v", i, err)
				return
			}
			if out.Stdout() != want[i] {
				t.Errorf("task #%d stdout mixed up or incomplete (%d bytes, want %d)", i, len(out.Stdout()), len(want[i]))
			}
			res, err := h.exec.Wait(ctx, task.ID)
			if err != nil || res.ExitCode != 0 {
				t.Errorf("Wait #%d = %+v, %v; want exit 0", i, res, err)
			}
		})
	}
	wg.Wait()
}

func checkEnv(ctx context.Context, t *testing.T, h *harness) {
	if h.spec.PrintEnv == nil {
		t.Skip("Spec.PrintEnv not set")
	}
	for _, value := range []string{"GPU-11111111-2222-3333-4444-555555555555,GPU-66666666-7777-8888-9999-000000000000", ""} {
		task := NewTask(t, h.spec.PrintEnv("CUDA_VISIBLE_DEVICES"))
		task.Env["CUDA_VISIBLE_DEVICES"] = value
		h.start(ctx, t, task)
		if _, err := h.exec.Wait(ctx, task.ID); err != nil {
			t.Fatalf("Wait: %v", err)
		}
		out, err := Collect(ctx, h.exec, task.ID)
		if err != nil {
			t.Fatalf("Logs: %v", err)
		}
		if got, want := out.Stdout(), value+"\n"; got != want {
			t.Errorf("CUDA_VISIBLE_DEVICES seen by the task = %q, want %q (task.Env must win)", got, want)
		}
	}
}
