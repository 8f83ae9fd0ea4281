package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// onceScript runs long the first time (until stopped) and succeeds the
// second: $1/ran marks the first run.
const onceScript = `d="$1"
if [ -e "$d/ran" ]; then echo second run; exit 0; fi
: > "$d/ran"
trap 'exit 143' TERM
sleep 120 & wait $!`

// agentUnderTest is an agent process a test stops itself.
type agentUnderTest struct {
	cmd    *exec.Cmd
	stderr *lockedBuffer
	done   chan struct{}
	err    error
}

// runAgent starts `gpulayer agent run` on dataDir as worker id; the test
// ends it with SIGKILL if it is still running.
func runAgent(t *testing.T, h *coordinatortest.Harness, dataDir, id string, uidBase int, extra ...string) *agentUnderTest {
	t.Helper()
	args := append([]string{"agent", "run", "--coordinator", h.URL, "--data-dir", dataDir, "--worker-id", id,
		"--fake-gpus", "none", "--max-tasks", "1", "--stop-grace", "5s", "--log-level", "info",
		"--task-uid-base", strconv.Itoa(uidBase), "--task-sandbox-keep", taskShareRoot(t)}, extra...)
	if os.Geteuid() != 0 {
		args = append(args, "--allow-shared-user-tasks")
	}
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), "GPULAYER_JOIN_TOKEN="+h.JoinToken)
	a := &agentUnderTest{cmd: cmd, stderr: &lockedBuffer{}, done: make(chan struct{})}
	cmd.Stderr = a.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { a.err = cmd.Wait(); close(a.done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-a.done
	})
	return a
}

// exitsCleanly waits for the agent to exit 0 by itself.
func (a *agentUnderTest) exitsCleanly(t *testing.T, within time.Duration) {
	t.Helper()
	select {
	case <-a.done:
		if a.err != nil {
			t.Fatalf("agent exited with %v\n%s", a.err, a.stderr.String())
		}
	case <-time.After(within):
		t.Fatalf("agent still running after %s\n%s", within, a.stderr.String())
	}
}

// sharedDir is a directory the test and its tasks (other uids) share.
// It lies under taskShareRoot, which the agents the tests start keep
// reachable in their tasks' sandboxes.
func sharedDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp(taskShareRoot(t), "gpulayer-drain-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// taskShareRoot is where the tests make directories their tasks share:
// under the host's /tmp, which a sandboxed task does not see (it has a
// /tmp of its own), so every agent the tests start is given
// --task-sandbox-keep for it.
func taskShareRoot(t *testing.T) string {
	t.Helper()
	root := filepath.Join(os.TempDir(), "gpulayer-cli-shared")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(root, 0o755); err != nil { // task uids pass through
		t.Fatal(err)
	}
	return root
}

// drainJob submits a job of onceScript over dir, with one attempt allowed,
// and waits for its first run to start.
func drainJob(t *testing.T, admin *client.Client, a *agentUnderTest, dir string) string {
	t.Helper()
	if err := os.Chmod(dir, 0o777); err != nil { // reachable by task uids
		t.Fatal(err)
	}
	cfg, err := json.Marshal(map[string]any{"command": "sh", "args": []string{"-c", onceScript, "sh", dir}})
	if err != nil {
		t.Fatal(err)
	}
	job, err := admin.SubmitJob(t.Context(), api.JobSpec{Executor: "exec", Config: cfg, MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		j, err := admin.Job(t.Context(), job.ID)
		_, ran := os.Stat(filepath.Join(dir, "ran"))
		if err == nil && j.Tasks[0].State == api.TaskRunning && ran == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the task did not start: %+v %v\n%s", j.Tasks, err, a.stderr.String())
		}
		select {
		case <-a.done:
			t.Fatalf("the agent exited: %v\n%s", a.err, a.stderr.String())
		case <-time.After(100 * time.Millisecond):
		}
	}
	return job.ID
}

// wantPreempted checks that the job's task went back to the queue with its
// one attempt preempted, not used up.
func wantPreempted(t *testing.T, admin *client.Client, jobID string) {
	t.Helper()
	coordinatortest.WaitFor(t, 30*time.Second, "the task to be handed back", func() bool {
		j, err := admin.Job(t.Context(), jobID)
		return err == nil && j.Tasks[0].State == api.TaskPending
	})
	j, _ := admin.Job(t.Context(), jobID)
	if a := j.Tasks[0].Attempts; len(a) != 1 || a[0].State != api.AttemptPreempted {
		t.Fatalf("attempts after the stop: %+v", a)
	}
}

// SIGTERM drains the agent's worker: its running task gets the drain
// deadline, is then stopped and handed back without using up its one
// attempt, and the agent exits 0. Started again, the agent lifts its own
// drain and runs the task to success.
func TestSIGTERMDrainsTheWorker(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	admin := h.Client(t, h.AdminToken)
	dataDir, shared := t.TempDir(), sharedDir(t)
	a := runAgent(t, h, dataDir, "draining", 63100, "--drain-deadline", "2s")
	jobID := drainJob(t, admin, a, shared)

	if err := a.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	a.exitsCleanly(t, 45*time.Second)
	wantPreempted(t, admin, jobID)
	w, err := admin.Worker(t.Context(), "draining")
	if err != nil || w.Status != api.WorkerDraining || w.DrainedBy != api.DrainedBySelf {
		t.Fatalf("worker after SIGTERM: %+v %v", w, err)
	}

	runAgent(t, h, dataDir, "draining", 63100)
	coordinatortest.WaitFor(t, 60*time.Second, "the task to succeed on the restarted agent", func() bool {
		j, err := admin.Job(t.Context(), jobID)
		return err == nil && j.State == api.TaskSucceeded
	})
	if w, err := admin.Worker(t.Context(), "draining"); err != nil || w.Status != api.WorkerReady {
		t.Fatalf("worker after the restart: %+v %v", w, err)
	}
}

// An admin's stop stops the task at once, hands it back, and the agent
// exits 0; a restarted agent does not lift an admin's stop.
func TestAdminStopEndsTheAgent(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	admin := h.Client(t, h.AdminToken)
	dataDir, shared := t.TempDir(), sharedDir(t)
	a := runAgent(t, h, dataDir, "stopped", 63110)
	jobID := drainJob(t, admin, a, shared)

	if _, err := admin.StopWorker(t.Context(), "stopped"); err != nil {
		t.Fatal(err)
	}
	a.exitsCleanly(t, 45*time.Second)
	wantPreempted(t, admin, jobID)

	again := runAgent(t, h, dataDir, "stopped", 63110)
	again.exitsCleanly(t, 45*time.Second)
	if w, err := admin.Worker(t.Context(), "stopped"); err != nil || w.Status != api.WorkerStopping {
		t.Fatalf("worker after a restart: %+v %v", w, err)
	}
}

// With --leave-on-terminate, SIGTERM deregisters: once idle the worker is
// forgotten and the agent exits 0.
func TestLeaveOnTerminateDeregisters(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	admin := h.Client(t, h.AdminToken)
	a := runAgent(t, h, t.TempDir(), "leaving", 63120, "--leave-on-terminate")
	coordinatortest.WaitFor(t, 60*time.Second, "the worker to register", func() bool {
		_, err := admin.Worker(t.Context(), "leaving")
		return err == nil
	})
	if err := a.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	a.exitsCleanly(t, 45*time.Second)
	if _, err := admin.Worker(t.Context(), "leaving"); !client.IsCode(err, api.CodeNotFound) {
		t.Fatalf("worker after leaving: %v, want not_found\n%s", err, a.stderr.String())
	}
}
