package pluginhost_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/sdk/executor"
	"github.com/gpulayer/gpulayer/sdk/executor/executortest"
)

// sh is an exec config running script with sh -c; extra are $1, $2...
func sh(script string, extra ...string) []byte {
	b, _ := json.Marshal(map[string]any{"command": "sh", "args": append([]string{"-c", script, "sh"}, extra...)})
	return b
}

func execSpec() executortest.Spec {
	return executortest.Spec{
		Print:    func(lines []string) []byte { return sh(`printf '%s\n' "$@"`, lines...) },
		Block:    func() []byte { return []byte(`{"command": "sleep", "args": ["100"]}`) },
		Exit:     func(code int) []byte { return sh("exit " + strconv.Itoa(code)) },
		PrintEnv: func(key string) []byte { return sh(`printf '%s\n' "$` + key + `"`) },
		Invalid:  []byte(`{"command": "true", "bogus": 1}`),
	}
}

// TestBuiltinExecConforms runs the harness against the built-in exec
// executor in a plugin process: the test binary re-executed, as the agent
// re-executes gpulayer.
func TestBuiltinExecConforms(t *testing.T) {
	h := newHost(t, "")
	executortest.RunChecks(t, execSpec(), func() executor.Executor { return get(t, h, "exec") })
}

// runTask starts task, waits for it and collects its output.
func runTask(ctx context.Context, t *testing.T, e executor.Executor, task executor.Task) (executor.Result, *executortest.Output) {
	t.Helper()
	if err := e.Start(ctx, task); err != nil {
		t.Fatalf("Start: %v", err)
	}
	out, err := executortest.Collect(ctx, e, task.ID)
	if err != nil {
		t.Fatalf("Logs: %v", err)
	}
	res, err := e.Wait(ctx, task.ID)
	if err != nil {
		t.Fatalf("Wait: %v", err)
	}
	return res, out
}

func TestBuiltinExec(t *testing.T) {
	h := newHost(t, "")
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	e := get(t, h, "exec")

	t.Run("exit_0", func(t *testing.T) {
		res, out := runTask(ctx, t, e, executortest.NewTask(t, sh("echo hello")))
		if res.ExitCode != 0 || res.Reason != "" || out.Stdout() != "hello\n" {
			t.Errorf("got %+v, stdout %q", res, out.Stdout())
		}
	})
	t.Run("exit_7", func(t *testing.T) {
		res, out := runTask(ctx, t, e, executortest.NewTask(t, sh("echo oops >&2; exit 7")))
		if res.ExitCode != 7 || out.Stderr() != "oops\n" {
			t.Errorf("got %+v, stderr %q", res, out.Stderr())
		}
	})
	t.Run("stop_kills_sleep", func(t *testing.T) {
		task := executortest.NewTask(t, []byte(`{"command": "sleep", "args": ["100"]}`))
		if err := e.Start(ctx, task); err != nil {
			t.Fatal(err)
		}
		begin := time.Now()
		if err := e.Stop(ctx, task.ID, 10*time.Second); err != nil {
			t.Fatal(err)
		}
		res, err := e.Wait(ctx, task.ID)
		if err != nil {
			t.Fatal(err)
		}
		if res.ExitCode != 143 || !strings.Contains(res.Reason, "SIGTERM") {
			t.Errorf("got %+v, want 143 by SIGTERM", res)
		}
		if took := time.Since(begin); took > 9*time.Second {
			t.Errorf("Stop took %v: SIGTERM should end sleep at once", took)
		}
	})
	t.Run("stop_grace_then_kill", func(t *testing.T) {
		task := executortest.NewTask(t, sh(`trap '' TERM; echo ready; exec sleep 100`))
		if err := e.Start(ctx, task); err != nil {
			t.Fatal(err)
		}
		ready := errors.New("ready")
		err := e.Logs(ctx, task.ID, func(c executor.LogChunk) error {
			if strings.Contains(string(c.Data), "ready") {
				return ready
			}
			return nil
		})
		if !errors.Is(err, ready) {
			t.Fatalf("waiting for ready: %v", err)
		}
		if err := e.Stop(ctx, task.ID, 200*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		res, _ := e.Wait(ctx, task.ID)
		if res.ExitCode != 137 || !strings.Contains(res.Reason, "SIGKILL") {
			t.Errorf("got %+v, want 137 by SIGKILL", res)
		}
	})
	t.Run("cuda_visible_devices", func(t *testing.T) {
		task := executortest.NewTask(t, []byte(`{"command": "sh", "args": ["-c", "echo \"[$CUDA_VISIBLE_DEVICES]\""],
			"env": {"CUDA_VISIBLE_DEVICES": "from-config"}}`))
		task.Env["CUDA_VISIBLE_DEVICES"] = "GPU-0b3f,GPU-77aa"
		task.Devices = []string{"GPU-0b3f", "GPU-77aa"}
		_, out := runTask(ctx, t, e, task)
		if got := out.Stdout(); got != "[GPU-0b3f,GPU-77aa]\n" {
			t.Errorf("task saw CUDA_VISIBLE_DEVICES %q", got)
		}
	})
	t.Run("logs_order", func(t *testing.T) {
		const n = 3000
		res, out := runTask(ctx, t, e, executortest.NewTask(t,
			sh(`i=0; while [ $i -lt `+strconv.Itoa(n)+` ]; do echo "o$i"; echo "e$i" >&2; i=$((i+1)); done`)))
		var wantOut, wantErr strings.Builder
		for i := range n {
			fmt.Fprintf(&wantOut, "o%d\n", i)
			fmt.Fprintf(&wantErr, "e%d\n", i)
		}
		if res.ExitCode != 0 || out.Stdout() != wantOut.String() || out.Stderr() != wantErr.String() {
			t.Errorf("exit %d; stdout ok=%v stderr ok=%v", res.ExitCode,
				out.Stdout() == wantOut.String(), out.Stderr() == wantErr.String())
		}
	})
}
