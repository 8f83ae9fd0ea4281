//go:build linux

package container

import (
	"context"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/internal/syncbuf"
	"github.com/gpulayer/gpulayer/internal/testenv"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/executor"
)

// docker exec into a running task's container: the command runs as the
// task's user with stdin, stdout, stderr and its exit code; with a TTY
// it gets the size asked and a resize.
func TestDockerExecIntoATask(t *testing.T) {
	c := dockerOrSkip(t)
	e := newWith(Options{}, c)
	task := taskFor(t, "exec1", "", executor.Sandbox{})
	task.Config, _ = json.Marshal(api.ContainerConfig{Image: probeImage, Args: []string{"sleep"}})
	if err := e.Start(t.Context(), task); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Stop(context.Background(), task.ID, 0) })

	var out, errOut syncbuf.Buffer
	code, err := e.Exec(t.Context(), executor.ExecRequest{ID: task.ID, Command: []string{"/probe", "id", "cat", "stderr", "exit", "6"}},
		executor.ExecStreams{Stdin: strings.NewReader("from-stdin\n"), Stdout: &out, Stderr: &errOut})
	if err != nil {
		t.Fatal(err)
	}
	if code != 6 || !strings.HasPrefix(out.String(), "uid=4242 gid=4242") || !strings.HasSuffix(out.String(), "from-stdin\n") || errOut.String() != "to stderr\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q: want 6, the task's uid, stdin back, and stderr", code, out.String(), errOut.String())
	}

	stdinR, stdinW := io.Pipe()
	resize := make(chan executor.TermSize, 1)
	var tty syncbuf.Buffer
	done := make(chan error, 1)
	go func() {
		code, err := e.Exec(t.Context(), executor.ExecRequest{ID: task.ID, TTY: true, Size: executor.TermSize{Rows: 30, Cols: 100},
			Command: []string{"/probe", "ttyloop", "exit", "2"}}, executor.ExecStreams{Stdin: stdinR, Stdout: &tty, Stderr: io.Discard, Resize: resize})
		if err == nil && code != 2 {
			err = errUnexpectedCode(code)
		}
		done <- err
	}()
	testenv.WaitFor(t, 30*time.Second, tty.String, func() bool {
		select {
		case err := <-done:
			t.Fatalf("the tty exec ended early: %v, output %q", err, tty.String())
		default:
		}
		_, _ = stdinW.Write([]byte("\n")) // the size is set just after the exec starts on older daemons
		return strings.Contains(tty.String(), "size 30 100")
	})
	resize <- executor.TermSize{Rows: 50, Cols: 120}
	testenv.WaitFor(t, 30*time.Second, tty.String, func() bool {
		_, _ = stdinW.Write([]byte("\n"))
		return strings.Contains(tty.String(), "size 50 120")
	})
	_, _ = stdinW.Write([]byte("q\n"))
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("tty exec: %v (output %q)", err, tty.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the tty exec did not end")
	}
}

type errUnexpectedCode int

func (e errUnexpectedCode) Error() string { return "unexpected exit code " + strconv.Itoa(int(e)) }
