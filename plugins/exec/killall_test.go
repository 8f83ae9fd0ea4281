//go:build linux

package exec_test

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/plugins/exec"
	"github.com/gpulayer/gpulayer/sdk/executor/executortest"
)

// KillAll, for a plugin about to exit without its agent, kills every
// running task with the whole of its process group, a process the task
// started in the background included, and refuses later Starts. This is
// the path of a plugin without a sandbox (not root); in a sandbox,
// TestSandboxKillAllEndsEveryDescendant.
func TestKillAllKillsWholeGroups(t *testing.T) {
	e := exec.New(exec.Options{DisableSandbox: true})
	var children []string
	var tasks []string
	for i := range 2 {
		pidFile := filepath.Join(t.TempDir(), "child")
		children = append(children, pidFile)
		task := executortest.NewTask(t, shell(`sleep 120 & echo $! > "$1.tmp"; mv "$1.tmp" "$1"; wait`, pidFile))
		task.ID = "killall-" + strconv.Itoa(i)
		if err := e.Start(t.Context(), task); err != nil {
			t.Fatal(err)
		}
		tasks = append(tasks, task.ID)
	}
	var pids []int
	for _, f := range children {
		pids = append(pids, waitPidFile(t, f))
	}

	e.KillAll()
	for _, id := range tasks {
		res, err := e.Wait(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		if res.ExitCode != 128+int(syscall.SIGKILL) || !strings.Contains(res.Reason, "SIGKILL") {
			t.Errorf("task %s after KillAll: %+v, want killed by SIGKILL", id, res)
		}
	}
	for _, pid := range pids {
		waitGone(t, pid)
	}
	late := executortest.NewTask(t, shell("true"))
	if err := e.Start(t.Context(), late); !errors.Is(err, exec.ErrKilled) {
		t.Fatalf("Start after KillAll = %v, want ErrKilled", err)
	}
}

func waitPidFile(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if b, err := os.ReadFile(path); err == nil {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatalf("%s: %q", path, b)
			}
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never written", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitGone polls until pid no longer runs (a zombie counts as gone).
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil || strings.Contains(string(b), ") Z ") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d still runs: %s", pid, b)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
