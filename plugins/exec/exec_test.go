package exec_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/plugins/exec"
	"github.com/gpulayer/gpulayer/sdk/executor"
	"github.com/gpulayer/gpulayer/sdk/executor/executortest"
)

// cfg encodes an exec config.
func cfg(c exec.Config) []byte {
	b, err := json.Marshal(c)
	if err != nil {
		panic(err)
	}
	return b
}

// shell is a config running script with sh -c; extra become $1, $2...
func shell(script string, extra ...string) []byte {
	return cfg(exec.Config{Command: "sh", Args: append([]string{"-c", script, "sh"}, extra...)})
}

// Spec describes the exec executor to the conformance harness.
func Spec() executortest.Spec {
	return executortest.Spec{
		New:      func() executor.Executor { return exec.New(exec.Options{}) },
		Print:    func(lines []string) []byte { return shell(`printf '%s\n' "$@"`, lines...) },
		Block:    func() []byte { return cfg(exec.Config{Command: "sleep", Args: []string{"100"}}) },
		Exit:     func(code int) []byte { return shell("exit " + strconv.Itoa(code)) },
		PrintEnv: func(key string) []byte { return shell(`printf '%s\n' "$` + key + `"`) },
		Invalid:  []byte(`{"command": "true", "bogus": 1}`),
	}
}

func TestConformance(t *testing.T) {
	executortest.Run(t, Spec())
}

// run starts config on e and returns the task after it ended, with its
// stdout, stderr and result.
func run(t *testing.T, e executor.Executor, task executor.Task) (stdout, stderr string, res executor.Result) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := e.Start(ctx, task); err != nil {
		t.Fatalf("Start: %v", err)
	}
	res, err := e.Wait(ctx, task.ID)
	if err != nil {
		t.Fatalf("Wait: %v", err)
	}
	out, err := executortest.Collect(ctx, e, task.ID)
	if err != nil {
		t.Fatalf("Logs: %v", err)
	}
	return out.Stdout(), out.Stderr(), res
}

func TestEnvironmentLayers(t *testing.T) {
	t.Setenv("GL_A", "parent")
	t.Setenv("GL_C", "parent")
	t.Setenv("CUDA_VISIBLE_DEVICES", "GPU-parent")
	t.Setenv(executor.Handshake.MagicCookieKey, executor.Handshake.MagicCookieValue)
	t.Setenv("PLUGIN_CLIENT_CERT", "secret-pem")
	e := exec.New(exec.Options{})
	task := executortest.NewTask(t, cfg(exec.Config{
		Command: "sh",
		Args: []string{"-c", `printf 'A=%s B=%s C=%s CUDA=[%s] cookie=[%s] cert=[%s]\n' ` +
			`"$GL_A" "$GL_B" "$GL_C" "$CUDA_VISIBLE_DEVICES" "$` + executor.Handshake.MagicCookieKey + `" "$PLUGIN_CLIENT_CERT"`},
		Env: map[string]string{"GL_A": "config", "GL_B": "config", "CUDA_VISIBLE_DEVICES": "GPU-config"},
	}))
	task.Env = map[string]string{"GL_B": "task", "CUDA_VISIBLE_DEVICES": ""}
	stdout, stderr, res := run(t, e, task)
	// GL_C is not on the allowlist: the plugin's own environment stays
	// out of the task.
	want := "A=config B=task C= CUDA=[] cookie=[] cert=[]\n"
	if stdout != want || res.ExitCode != 0 {
		t.Fatalf("stdout %q (stderr %q, %+v), want %q", stdout, stderr, res, want)
	}
}

func TestWorkDir(t *testing.T) {
	e := exec.New(exec.Options{})
	task := executortest.NewTask(t, shell("pwd"))
	stdout, _, _ := run(t, e, task)
	if got := strings.TrimSpace(stdout); got != task.WorkDir {
		t.Errorf("default dir %q, want WorkDir %q", got, task.WorkDir)
	}

	task = executortest.NewTask(t, cfg(exec.Config{Command: "pwd", Dir: "sub"}))
	if err := os.Mkdir(filepath.Join(task.WorkDir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	stdout, _, _ = run(t, e, task)
	if got, want := strings.TrimSpace(stdout), filepath.Join(task.WorkDir, "sub"); got != want {
		t.Errorf("relative dir %q, want %q", got, want)
	}
}

func TestCommandFromTaskPATH(t *testing.T) {
	e := exec.New(exec.Options{})
	task := executortest.NewTask(t, cfg(exec.Config{Command: "gl-hello"}))
	// In the task's own directory: a sandboxed task sees nothing of the
	// host's /tmp, where t.TempDir puts the others.
	bin := filepath.Join(task.WorkDir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(bin, "gl-hello")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho hello from $0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	task.Config = cfg(exec.Config{Command: "gl-hello", Env: map[string]string{"PATH": bin + ":/usr/bin:/bin"}})
	stdout, _, res := run(t, e, task)
	if res.ExitCode != 0 || stdout != "hello from "+script+"\n" {
		t.Errorf("got %q, %+v", stdout, res)
	}
}

func TestCannotStart(t *testing.T) {
	e := exec.New(exec.Options{})
	for _, c := range []exec.Config{
		{Command: "gpulayer-no-such-command-xyz"},
		{Command: "/nonexistent/bin/tool"},
		{Command: "true", Dir: "nonexistent/dir"},
	} {
		task := executortest.NewTask(t, cfg(c))
		err := e.Start(t.Context(), task)
		if err == nil {
			t.Errorf("Start(%+v) succeeded", c)
			continue
		}
		if errors.Is(err, executor.ErrInvalidConfig) {
			t.Errorf("Start(%+v) = %v: a start failure is not a config error", c, err)
		}
		if _, err := e.Wait(t.Context(), task.ID); !errors.Is(err, executor.ErrUnknownTask) {
			t.Errorf("Wait after failed start = %v, want ErrUnknownTask", err)
		}
	}
}

func TestExitCodes(t *testing.T) {
	e := exec.New(exec.Options{})
	for _, tc := range []struct {
		script string
		code   int
		reason string
	}{
		{"exit 0", 0, ""},
		{"exit 7", 7, ""},
		{"kill -SEGV $$", 128 + int(syscall.SIGSEGV), "killed by signal SIGSEGV"},
		{"kill -KILL $$", 137, "killed by signal SIGKILL"},
	} {
		_, _, res := run(t, e, executortest.NewTask(t, shell(tc.script)))
		if res.ExitCode != tc.code || !strings.HasPrefix(res.Reason, tc.reason) || (tc.reason == "" && res.Reason != "") {
			t.Errorf("%q: got %+v, want exit %d reason %q", tc.script, res, tc.code, tc.reason)
		}
	}
}

func TestStdoutAndStderrInOrder(t *testing.T) {
	e := exec.New(exec.Options{})
	script := `i=0; while [ $i -lt 300 ]; do echo "out $i"; echo "err $i" >&2; i=$((i+1)); done`
	stdout, stderr, res := run(t, e, executortest.NewTask(t, shell(script)))
	if res.ExitCode != 0 {
		t.Fatalf("%+v", res)
	}
	var wantOut, wantErr strings.Builder
	for i := range 300 {
		fmt.Fprintf(&wantOut, "out %d\n", i)
		fmt.Fprintf(&wantErr, "err %d\n", i)
	}
	if stdout != wantOut.String() || stderr != wantErr.String() {
		t.Errorf("streams out of order or mixed:\nstdout %q\nstderr %q", stdout, stderr)
	}
}

// waitOutput follows task's logs until stdout contains want.
func waitOutput(ctx context.Context, t *testing.T, e executor.Executor, id, want string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var out executortest.Output
	found := errors.New("found")
	err := e.Logs(ctx, id, func(c executor.LogChunk) error {
		_ = out.Send(c)
		if strings.Contains(out.Stdout(), want) {
			return found
		}
		return nil
	})
	if !errors.Is(err, found) {
		t.Fatalf("waiting for %q in output: %v (stdout %q, stderr %q)", want, err, out.Stdout(), out.Stderr())
	}
	return out.Stdout()
}

func TestStopEscalatesToKill(t *testing.T) {
	e := exec.New(exec.Options{})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	// sleep inherits the ignored SIGTERM, so only SIGKILL ends it.
	task := executortest.NewTask(t, shell(`trap '' TERM; echo ready; exec sleep 100`))
	if err := e.Start(ctx, task); err != nil {
		t.Fatal(err)
	}
	waitOutput(ctx, t, e, task.ID, "ready\n")
	const grace = 300 * time.Millisecond
	begin := time.Now()
	if err := e.Stop(ctx, task.ID, grace); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if took := time.Since(begin); took < grace {
		t.Errorf("Stop returned after %v, before the %v grace period", took, grace)
	}
	res, err := e.Wait(ctx, task.ID)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 137 || res.Reason != "stopped: killed by signal SIGKILL" {
		t.Errorf("got %+v, want 137 stopped by SIGKILL", res)
	}
}

func TestStopTerminatesPolitely(t *testing.T) {
	e := exec.New(exec.Options{})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	task := executortest.NewTask(t, cfg(exec.Config{Command: "sleep", Args: []string{"100"}}))
	if err := e.Start(ctx, task); err != nil {
		t.Fatal(err)
	}
	if err := e.Stop(ctx, task.ID, time.Minute); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	res, _ := e.Wait(ctx, task.ID)
	if res.ExitCode != 143 || res.Reason != "stopped: killed by signal SIGTERM" {
		t.Errorf("got %+v, want 143 stopped by SIGTERM", res)
	}
}

// gone waits until pid no longer exists.
func gone(ctx context.Context, t *testing.T, pid int) {
	t.Helper()
	for {
		err := syscall.Kill(pid, 0)
		if errors.Is(err, syscall.ESRCH) {
			return
		}
		select {
		case <-ctx.Done():
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("process %d still exists", pid)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// Without a sandbox (a plugin that is not root), Stop kills the task's
// whole process group. (sandbox_linux_test.go: in a sandbox, everything
// the task started, whatever its group.)
func TestStopKillsWholeGroup(t *testing.T) {
	e := exec.New(exec.Options{DisableSandbox: true})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	task := executortest.NewTask(t, shell(`sleep 100 & echo "child $!"; wait`))
	if err := e.Start(ctx, task); err != nil {
		t.Fatal(err)
	}
	out := waitOutput(ctx, t, e, task.ID, "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(out, "child ")))
	if err != nil {
		t.Fatalf("output %q: %v", out, err)
	}
	if err := e.Stop(ctx, task.ID, time.Minute); err != nil {
		t.Fatal(err)
	}
	gone(ctx, t, pid)
}

// Without a sandbox, what is left of the task's process group is killed
// when its main process exits.
func TestLeftoversKilledWhenMainExits(t *testing.T) {
	// A long drain timeout: only the group kill can end this task quickly.
	e := exec.New(exec.Options{DrainTimeout: time.Hour, DisableSandbox: true})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	stdout, _, res := run(t, e, executortest.NewTask(t, shell(`sleep 100 & echo "child $!"`)))
	if res.ExitCode != 0 {
		t.Fatalf("%+v", res)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(stdout, "child ")))
	if err != nil {
		t.Fatalf("output %q: %v", stdout, err)
	}
	gone(ctx, t, pid)
}

// Without a sandbox, a process that left the task's group can hold its
// output open; the task still ends, saying so.
func TestEscapedProcessDoesNotHangTask(t *testing.T) {
	e := exec.New(exec.Options{DrainTimeout: 200 * time.Millisecond, DisableSandbox: true})
	stdout, stderr, res := run(t, e, executortest.NewTask(t, shell(
		// The flag file appears once the child has left the group, so
		// the group kill at exit cannot catch it first.
		`setsid sh -c 'touch "$0"; exec sleep 100' "$PWD/flag" & while [ ! -e flag ]; do :; done; echo "child $!"`)))
	pid, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(stdout, "child ")))
	if err != nil {
		t.Fatalf("output %q: %v", stdout, err)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	if res.ExitCode != 0 || !strings.Contains(stderr, "left the task's process group") {
		t.Errorf("got %+v, stderr %q", res, stderr)
	}
}

func TestLogLimitDropsOldest(t *testing.T) {
	e := exec.New(exec.Options{LogLimit: 4096})
	script := `i=0; while [ $i -lt 1000 ]; do echo "line $i"; i=$((i+1)); done`
	stdout, stderr, _ := run(t, e, executortest.NewTask(t, shell(script)))
	if !strings.Contains(stderr, "bytes of earlier output dropped") {
		t.Errorf("no drop marker on stderr: %q", stderr)
	}
	if !strings.HasSuffix(stdout, "line 999\n") || strings.Contains(stdout, "line 0\n") || len(stdout) > 4096 {
		t.Errorf("kept %d bytes, want the newest ≤4096: %q…", len(stdout), stdout[:min(len(stdout), 40)])
	}
}

func TestForgetsOldEndedTasks(t *testing.T) {
	e := exec.New(exec.Options{MaxEnded: 2})
	var ids []string
	for range 3 {
		task := executortest.NewTask(t, shell("true"))
		run(t, e, task)
		ids = append(ids, task.ID)
	}
	if _, err := e.Wait(t.Context(), ids[0]); !errors.Is(err, executor.ErrUnknownTask) {
		t.Errorf("oldest ended task still known: %v", err)
	}
	for _, id := range ids[1:] {
		if _, err := e.Wait(t.Context(), id); err != nil {
			t.Errorf("recent task %s forgotten: %v", id, err)
		}
	}
}
