package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// gpuLockScript stands for a task that holds every GPU of the node: it
// takes a lock directory in $1 for as long as it runs and appends what it
// did to $1/events. A second process taking the lock while another holds
// it (two attempts of one task at once, or two tasks on one GPU) writes
// "overlap" instead.
const gpuLockScript = `d="$1"; umask 000
if ! mkdir "$d/gpus" 2>/dev/null; then echo "overlap $GPULAYER_TASK_ID $GPULAYER_ATTEMPT_ID" >> "$d/events"; exit 3; fi
trap 'rmdir "$d/gpus"; exit 143' TERM
echo "start $GPULAYER_TASK_ID $GPULAYER_ATTEMPT_ID" >> "$d/events"
sleep 10 & wait $!
echo "end $GPULAYER_TASK_ID $GPULAYER_ATTEMPT_ID" >> "$d/events"
rmdir "$d/gpus"`

// An agent process paused (SIGSTOP) past its task's lease and resumed
// loses nothing: the coordinator counts the attempt lost and hands the
// task out again, and the agent, on learning its attempt is stale, stops
// it before the next attempt or another task may use its GPUs. The task
// succeeds on its second attempt, a job submitted during the pause
// succeeds too, and no two processes ever held the GPUs at once.
func TestPausedAgentLosesNothing(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	admin := h.Client(t, h.AdminToken)
	shared, err := os.MkdirTemp(taskShareRoot(t), "gpulayer-pause-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(shared) })
	if err := os.Chmod(shared, 0o777); err != nil { // reachable by task uids
		t.Fatal(err)
	}

	args := []string{"agent", "run", "--coordinator", h.URL, "--data-dir", t.TempDir(),
		"--worker-id", "paused", "--fake-gpus", "dgxh100", "--max-tasks", "2", "--stop-grace", "5s", "--log-level", "info",
		// A range of its own: the agents of other test packages may run
		// at the same time (integration's use 64000 …).
		"--task-uid-base", "63000", "--task-sandbox-keep", taskShareRoot(t)}
	if os.Geteuid() != 0 {
		args = append(args, "--allow-shared-user-tasks")
	}
	agentProc := startBinaryEnv(t, []string{"GPULAYER_JOIN_TOKEN=" + h.JoinToken}, args...)

	cfg, err := json.Marshal(map[string]any{"command": "sh", "args": []string{"-c", gpuLockScript, "sh", shared}})
	if err != nil {
		t.Fatal(err)
	}
	spec := api.JobSpec{Executor: "exec", Config: cfg, Resources: &api.Resources{GPUs: 8}, LeaseSeconds: 4, MaxAttempts: 5}
	first, err := admin.SubmitJob(t.Context(), spec)
	if err != nil {
		t.Fatal(err)
	}
	events := func() []string {
		b, _ := os.ReadFile(filepath.Join(shared, "events"))
		return strings.Fields(strings.ReplaceAll(string(b), "\n", " | "))
	}
	coordinatortest.WaitFor(t, 60*time.Second, "the first attempt to start", func() bool {
		return slices.Contains(events(), "start")
	})

	if err := agentProc.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	coordinatortest.WaitFor(t, 30*time.Second, "the paused agent's attempt to be lost", func() bool {
		j, err := admin.Job(t.Context(), first.ID)
		return err == nil && len(j.Tasks[0].Attempts) > 0 && j.Tasks[0].Attempts[0].State == api.AttemptLost
	})
	second, err := admin.SubmitJob(t.Context(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := agentProc.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}

	final := map[string]api.Job{}
	coordinatortest.WaitFor(t, 90*time.Second, "both jobs to end", func() bool {
		for _, id := range []string{first.ID, second.ID} {
			j, err := admin.Job(t.Context(), id)
			if err != nil || (j.Tasks[0].State != api.TaskSucceeded && j.Tasks[0].State != api.TaskFailed) {
				return false
			}
			final[id] = j
		}
		return true
	})
	log := strings.Join(events(), " ")
	for id, j := range final {
		task := j.Tasks[0]
		if task.State != api.TaskSucceeded {
			t.Errorf("job %s: task %s after %d attempts (%s)\nevents: %s\nagent:\n%s", id, task.State, task.Attempt, task.Reason, log, agentProc.stderr.String())
		}
	}
	if n := final[first.ID].Tasks[0].Attempt; n > 2 {
		t.Errorf("the paused task took %d attempts, want at most 2; events: %s", n, log)
	}
	if strings.Contains(log, "overlap") {
		t.Errorf("two processes held the GPUs at once: %s", log)
	}
}
