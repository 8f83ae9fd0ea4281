package exec_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/internal/syncbuf"
	"github.com/gpulayer/gpulayer/internal/testenv"
	"github.com/gpulayer/gpulayer/plugins/exec"
	"github.com/gpulayer/gpulayer/sdk/executor"
	"github.com/gpulayer/gpulayer/sdk/executor/executortest"
)

var errReady = errors.New("ready")

// startReady starts task on e and waits until it printed "ready".
func startReady(t *testing.T, e *exec.Executor, task executor.Task) {
	t.Helper()
	if err := e.Start(t.Context(), task); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Stop(context.Background(), task.ID, 0) })
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	var seen strings.Builder
	err := e.Logs(ctx, task.ID, func(c executor.LogChunk) error {
		seen.Write(c.Data)
		if strings.Contains(seen.String(), "ready") {
			return errReady
		}
		return nil
	})
	if !errors.Is(err, errReady) {
		t.Fatalf("the task never got ready: %v (output %q)", err, seen.String())
	}
}

// An exec'd command runs in the task's sandbox, as its user: it sees the
// task's own /tmp and its PID namespace, gets stdin, and its output and
// exit code come back.
func TestExecEntersTheTaskSandbox(t *testing.T) {
	sandboxOnly(t)
	e := sandboxed()
	task := userTask(t, 61520, nil, `echo task-secret > /tmp/marker; echo ready; exec sleep 100`)
	startReady(t, e, task)
	var out, errOut syncbuf.Buffer
	code, err := e.Exec(t.Context(), executor.ExecRequest{ID: task.ID, Command: []string{"sh", "-c", `id -u; cat /tmp/marker; cat; tr '\0' ' ' < /proc/1/cmdline; echo; echo oops >&2; exit 7`}},
		executor.ExecStreams{Stdin: strings.NewReader("from-stdin\n"), Stdout: &out, Stderr: &errOut})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out.String(), "\n")
	if code != 7 || len(lines) < 4 || lines[0] != "61520" || lines[1] != "task-secret" || lines[2] != "from-stdin" ||
		!strings.HasPrefix(lines[3], "gpulayer-task-init") || errOut.String() != "oops\n" {
		t.Fatalf("code %d, stdout %q, stderr %q: want 7, the task's uid, its /tmp, stdin, its init as pid 1, and oops", code, out.String(), errOut.String())
	}
	// The task outlives the exec, and takes another: with no_new_privs,
	// and no descriptor of the plugin's but 0, 1 and 2 (ls's own is 3).
	var second syncbuf.Buffer
	code, err = e.Exec(t.Context(), executor.ExecRequest{ID: task.ID, Command: []string{"sh", "-c", `grep NoNewPrivs /proc/self/status; ls /proc/self/fd`}},
		executor.ExecStreams{Stdout: &second, Stderr: io.Discard})
	if err != nil || code != 0 || second.String() != "NoNewPrivs:\t1\n0\n1\n2\n3\n" {
		t.Fatalf("a second exec: %d %v, output %q: want no_new_privs and fds 0 to 3", code, err, second.String())
	}
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	if res, err := e.Wait(ctx, task.ID); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the task ended with the exec: %+v %v", res, err)
	}
}

// With a TTY the command runs on a terminal of the size asked, and a
// resize reaches it.
func TestExecTTYAndResize(t *testing.T) {
	sandboxOnly(t)
	e := sandboxed()
	task := userTask(t, 61521, nil, `echo ready; exec sleep 100`)
	startReady(t, e, task)
	stdinR, stdinW := io.Pipe()
	resize := make(chan executor.TermSize, 1)
	var out syncbuf.Buffer
	done := make(chan error, 1)
	var code int
	go func() {
		var err error
		code, err = e.Exec(t.Context(), executor.ExecRequest{ID: task.ID, TTY: true, Size: executor.TermSize{Rows: 30, Cols: 100},
			Command: []string{"sh", "-c", `tty; stty size; while read x; do stty size; [ "$x" = q ] && exit 3; done`}},
			executor.ExecStreams{Stdin: stdinR, Stdout: &out, Stderr: io.Discard, Resize: resize})
		done <- err
	}()
	testenv.WaitFor(t, 20*time.Second, out.String, func() bool { return strings.Contains(out.String(), "30 100") })
	resize <- executor.TermSize{Rows: 50, Cols: 120}
	// Each line makes the command print its size again, until the new
	// one shows (the resize and stdin travel apart).
	testenv.WaitFor(t, 20*time.Second, out.String, func() bool {
		_, _ = stdinW.Write([]byte("\n"))
		return strings.Contains(out.String(), "50 120")
	})
	if _, err := stdinW.Write([]byte("q\n")); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the exec did not end")
	}
	if code != 3 || !strings.Contains(out.String(), "/dev/pts/") || !strings.Contains(out.String(), "50 120") {
		t.Fatalf("code %d, output %q: want 3, a /dev/pts terminal, and the new size", code, out.String())
	}
}

func TestExecUnknownTask(t *testing.T) {
	_, err := exec.New(exec.Options{}).Exec(t.Context(), executor.ExecRequest{ID: "nope", Command: []string{"true"}}, executor.ExecStreams{Stdout: io.Discard, Stderr: io.Discard})
	if !errors.Is(err, executor.ErrUnknownTask) {
		t.Fatalf("%v, want ErrUnknownTask", err)
	}
}

// A caller that goes away ends its command: nothing of it is left in the
// task's sandbox.
func TestExecCallerGoneEndsTheCommand(t *testing.T) {
	sandboxOnly(t)
	e := sandboxed()
	task := userTask(t, 61523, nil, `echo ready; exec sleep 100`)
	startReady(t, e, task)
	ctx, cancel := context.WithCancel(t.Context())
	var out syncbuf.Buffer
	done := make(chan error, 1)
	go func() {
		_, err := e.Exec(ctx, executor.ExecRequest{ID: task.ID, Command: []string{"sh", "-c", "echo started; sleep 99 & wait"}},
			executor.ExecStreams{Stdout: &out, Stderr: io.Discard})
		done <- err
	}()
	testenv.WaitFor(t, 20*time.Second, out.String, func() bool { return strings.Contains(out.String(), "started") })
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("exec after its caller went: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the exec did not end with its caller")
	}
	var ps syncbuf.Buffer
	code, err := e.Exec(t.Context(), executor.ExecRequest{ID: task.ID, Command: []string{"sh", "-c", `cat /proc/[0-9]*/cmdline | tr '\0' ' '`}},
		executor.ExecStreams{Stdout: &ps, Stderr: io.Discard})
	if err != nil || code != 0 || strings.Contains(ps.String(), "sleep 99") || !strings.Contains(ps.String(), "sleep 100") {
		t.Fatalf("processes in the sandbox after: %q (%d %v): want the task's sleep 100 and no sleep 99", ps.String(), code, err)
	}
}

// A command exec'd into a task without a sandbox ends when the task ends
// (in a sandbox the PID namespace sees to it): nothing of it is left to
// run on under the task's uid, which the next task may get. Before, it
// ran on.
func TestExecEndsWithAnUnsandboxedTask(t *testing.T) {
	e := exec.New(exec.Options{DisableSandbox: true})
	task := executortest.NewTask(t, []byte(`{"command": "sh", "args": ["-c", "echo ready; exec sleep 100"]}`))
	startReady(t, e, task)
	var out syncbuf.Buffer
	done := make(chan error, 1)
	go func() {
		_, err := e.Exec(t.Context(), executor.ExecRequest{ID: task.ID, Command: []string{"sh", "-c", "echo started; exec sleep 300"}},
			executor.ExecStreams{Stdout: &out, Stderr: io.Discard})
		done <- err
	}()
	testenv.WaitFor(t, 20*time.Second, out.String, func() bool { return strings.Contains(out.String(), "started") })
	if err := e.Stop(t.Context(), task.ID, time.Second); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, exec.ErrTaskEnded) {
			t.Fatalf("the exec after its task ended: %v, want ErrTaskEnded", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the exec'd command outlived its task")
	}
}
