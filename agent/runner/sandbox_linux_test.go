package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/plugins/exec"
	"github.com/gpulayer/gpulayer/sdk/executor"
)

// sandboxOnly skips a test that needs the exec executor's sandbox where
// it cannot make one.
func sandboxOnly(t *testing.T) {
	t.Helper()
	rootOnly(t)
	r, rec, _ := newRunner(t, NewUIDPool(61390, 1))
	a := shellTask(t, "true", nil)
	if out := r.Run(t.Context(), a); out.Failed {
		_, stderr, ended := rec.out(a.ID)
		t.Skipf("this host refuses the task sandbox: %s %s", ended, stderr)
	}
}

// probe is an executor whose Wait looks at the host the moment the task
// is known to have ended, before the runner's clean-up scans anything.
type probe struct {
	executor.Executor
	ended func()
}

func (p probe) Wait(ctx context.Context, id string) (executor.Result, error) {
	res, err := p.Executor.Wait(ctx, id)
	p.ended()
	return res, err
}

// The attack: a task's fork chain outlived it on its uid. In a sandbox,
// nothing of it runs once the executor says it ended: the uid is empty
// before the runner's scan for leftovers runs (which stays, as a second
// line).
func TestSandboxedTaskLeavesNothing(t *testing.T) {
	sandboxOnly(t)
	const uid = 61310
	var left []int
	rec := newRecorder()
	ex := probe{Executor: exec.New(exec.Options{}), ended: func() { left, _ = processesOf(uid) }}
	r := New(Config{Host: inProcess{ex}, Coordinator: rec, WorkRoot: searchableRoot(t), Users: NewUIDPool(uid, 1)})
	a := shellTask(t, `(setsid sleep 1000 & echo $! > ready); sh -c 'sleep 1000 &'; while [ ! -s ready ]; do :; done`, nil)
	r.Run(t.Context(), a)
	if _, stderr, ended := rec.out(a.ID); ended != "finish 0" {
		t.Fatalf("ended %q, stderr %q", ended, stderr)
	}
	if len(left) != 0 {
		t.Errorf("processes of uid %d ran on after the executor's Wait returned: %v", uid, left)
	}
}

// The agent's data dir, its config and the other tasks' directories are
// out of a sandboxed task's sight.
func TestSandboxHidesAgentDirs(t *testing.T) {
	sandboxOnly(t)
	host := t.TempDir()
	for _, parent := range []string{"/var/lib", "/run"} {
		if d, err := os.MkdirTemp(parent, "gpulayer-runner-test-"); err == nil {
			t.Cleanup(func() { _ = os.RemoveAll(d) })
			host = d
			break
		}
	}
	data := filepath.Join(host, "data")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "worker-credential.json"), []byte("glw_canary"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(host, 0o755); err != nil {
		t.Fatal(err)
	}
	r, rec, root := newRunnerWith(t, NewUIDPool(61320, 1), SandboxConfig{Hide: []string{data}})
	neighbour := filepath.Join(root, "attempt-of-another-task")
	if err := os.Mkdir(neighbour, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(neighbour, 0o777); err != nil {
		t.Fatal(err)
	}
	a := shellTask(t, `cat "$1/worker-credential.json"; ls "$2"; echo hi > "$2/attempt-of-another-task/planted"; echo end`, nil, data, root)
	r.Run(t.Context(), a)
	stdout, stderr, ended := rec.out(a.ID)
	if ended != "finish 0" || stdout != "end\n" || strings.Contains(stdout+stderr, "glw_canary") {
		t.Fatalf("ended %q, stdout %q, stderr %q", ended, stdout, stderr)
	}
	if strings.Count(stderr, "Permission denied") != 2 || !strings.Contains(stderr, "planted: Directory nonexistent") {
		t.Errorf("stderr %q: want the data dir and the work root refused, the other task's directory missing", stderr)
	}
	if _, err := os.Stat(filepath.Join(neighbour, "planted")); !os.IsNotExist(err) {
		t.Errorf("the task wrote into another task's directory: %v", err)
	}
}

// A sandbox that cannot be built fails the attempt, and its reason says
// why: no silent fallback to running the task without one.
func TestSandboxFailureInReason(t *testing.T) {
	sandboxOnly(t)
	r, rec, _ := newRunnerWith(t, NewUIDPool(61330, 1), SandboxConfig{Keep: []string{"/nonexistent/gpulayer-dataset"}})
	a := shellTask(t, "echo ran", nil)
	out := r.Run(t.Context(), a)
	stdout, _, ended := rec.out(a.ID)
	const want = "sandbox: keep /nonexistent/gpulayer-dataset: no such file or directory"
	if !out.Failed || !strings.Contains(out.Reason, want) || !strings.Contains(ended, want) || stdout != "" {
		t.Errorf("outcome %+v, reported %q, stdout %q; want a failure saying %q", out, ended, stdout, want)
	}
}
