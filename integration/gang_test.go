package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// buildGangHello builds examples/gang-hello where task users can run it.
func buildGangHello(t *testing.T) string {
	t.Helper()
	dir := dirForTasks(t, "gang-hello-", 0o755)
	out := filepath.Join(dir, "gang-hello")
	if b, err := exec.Command("go", "build", "-o", out, "github.com/gpulayer/gpulayer/examples/gang-hello").CombinedOutput(); err != nil {
		t.Fatalf("build gang-hello: %v\n%s", err, b)
	}
	return out
}

// agreedLines returns, per attempt number, the "agreed" line each rank
// printed.
func agreedLines(t *testing.T, c *client.Client, jobID string) map[int][]string {
	t.Helper()
	out := map[int][]string{}
	err := c.Logs(context.Background(), jobID, false, func(e api.LogEntry) error {
		for line := range strings.Lines(e.Data) {
			if strings.Contains(line, " agreed: ") {
				out[e.Attempt] = append(out[e.Attempt], strings.TrimSpace(line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// waitForWorld waits until the four ranks of the gang's attempt number
// attempt have each printed the world, and checks that they agree on it:
// four ranks, two on each of two nodes.
func waitForWorld(t *testing.T, c *client.Client, jobID string, attempt int) {
	t.Helper()
	const want = "0@0/local0 1@0/local1 2@1/local0 3@1/local1"
	var agreed map[int][]string
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if agreed = agreedLines(t, c, jobID); len(agreed[attempt]) == 4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after 30s waiting for four ranks agreeing on attempt %d: %s", attempt, gangReport(t, c, jobID))
		}
	}
	for _, line := range agreed[attempt] {
		if !strings.HasSuffix(line, "of 4 agreed: "+want) {
			t.Fatalf("a rank's world on attempt %d: %q, want %q", attempt, line, want)
		}
	}
}

// gangReport says where a gang's tasks stand, every attempt with its
// state and reason, and what its ranks printed: what a failed wait shows.
func gangReport(t *testing.T, c *client.Client, jobID string) string {
	t.Helper()
	var b strings.Builder
	j, err := c.Job(context.Background(), jobID)
	if err != nil {
		return fmt.Sprintf("(job unreadable: %v)", err)
	}
	fmt.Fprintf(&b, "job %s %s", j.ID, j.State)
	for _, tk := range j.Tasks {
		fmt.Fprintf(&b, "\n  task %d %s on %s", tk.Index, tk.State, tk.WorkerID)
		for _, a := range tk.Attempts {
			fmt.Fprintf(&b, "\n    attempt %d %s %s on %s exit %v: %s", a.Number, a.AttemptID, a.State, a.WorkerID, a.ExitCode, a.Reason)
		}
	}
	_ = c.Logs(context.Background(), jobID, false, func(e api.LogEntry) error {
		fmt.Fprintf(&b, "\n  log task %d attempt %d %s: %q", e.Index, e.Attempt, e.Stream, e.Data)
		return nil
	})
	return b.String()
}

// processOf finds the process of a task's attempt by the ids the agent
// put in its environment.
func processOf(t *testing.T, bin, attemptID string) int {
	t.Helper()
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		cmd, err := os.ReadFile(filepath.Join(p, "cmdline"))
		if err != nil || !bytes.HasPrefix(cmd, []byte(bin)) {
			continue
		}
		env, err := os.ReadFile(filepath.Join(p, "environ"))
		if err != nil || !bytes.Contains(env, []byte("GPULAYER_ATTEMPT_ID="+attemptID+"\x00")) {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(p))
		return pid
	}
	return 0
}

// A gang of four on several agents: all four are placed at once, every
// rank reaches the master that rendezvous named and they agree on the
// world; killing one member midway ends the others' attempts and the
// gang runs again, whole, to success.
func TestGangOfFourMeetsAndRestartsWhole(t *testing.T) {
	bin := buildGangHello(t)
	share := dirForTasks(t, "gang-share-", 0o755) // the task users read it
	release := filepath.Join(share, "release")

	h := startCoordinator(t)
	admin := h.Client(t, h.AdminToken)
	for _, id := range []string{"gang-1", "gang-2", "gang-3"} {
		startAgent(t, h.URL, h.JoinToken, id, "dgxh100")
	}
	coordinatortest.WaitFor(t, 10*time.Second, "three ready workers", func() bool {
		ws, err := admin.Workers(t.Context())
		ready := 0
		for _, w := range ws {
			if w.Status == api.WorkerReady {
				ready++
			}
		}
		return err == nil && ready == 3
	})

	cfg, _ := json.Marshal(api.ExecConfig{Command: bin, Env: map[string]string{"GANG_HELLO_HOLD": release}})
	job, err := admin.SubmitJob(t.Context(), api.JobSpec{
		Executor: "exec", Config: cfg, Count: 4, Gang: true, MaxPerWorker: 2, MaxAttempts: 2,
		Resources: &api.Resources{GPUs: 1},
	})
	if err != nil {
		t.Fatal(err)
	}

	// All four meet: every rank prints the same world, two ranks a node.
	waitForWorld(t, admin, job.ID, 1)
	j, err := admin.Job(t.Context(), job.ID)
	if err != nil {
		t.Fatal(err)
	}
	perWorker := map[string][]int{}
	for _, tk := range j.Tasks {
		if tk.State != api.TaskRunning || len(tk.Devices) != 1 {
			t.Fatalf("task %d: %s with devices %v", tk.Index, tk.State, tk.Devices)
		}
		perWorker[tk.WorkerID] = append(perWorker[tk.WorkerID], tk.Index)
	}
	if len(perWorker) != 2 {
		t.Fatalf("members per worker: %v, want two workers, two each", perWorker)
	}
	for w, ranks := range perWorker {
		slices.Sort(ranks)
		if !slices.Equal(ranks, []int{0, 1}) && !slices.Equal(ranks, []int{2, 3}) {
			t.Fatalf("worker %s runs ranks %v, want consecutive ranks", w, ranks)
		}
	}

	// Kill rank 2 midway.
	victim := j.Tasks[2]
	pid := processOf(t, bin, victim.AttemptID)
	if pid == 0 {
		t.Fatalf("no process for rank 2's attempt %s", victim.AttemptID)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitForWorld(t, admin, job.ID, 2)
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	j = waitJob(t, admin, job.ID, terminal, "the gang's end")
	if j.State != api.TaskSucceeded {
		t.Fatalf("job %s: %+v", j.State, j.Tasks)
	}
	for _, tk := range j.Tasks {
		if len(tk.Attempts) != 2 || tk.Attempts[1].State != api.TaskSucceeded {
			t.Fatalf("task %d attempts: %+v, want a second, successful one", tk.Index, tk.Attempts)
		}
		first := tk.Attempts[0]
		switch {
		case tk.Index == 2 && first.State != api.TaskFailed:
			t.Fatalf("the killed rank's first attempt: %s (%s), want failed", first.State, first.Reason)
		case tk.Index != 2 && (first.State != api.AttemptPreempted || !strings.Contains(first.Reason, fmt.Sprintf("gang member 2 (task %s) ended", victim.ID))):
			t.Fatalf("rank %d's first attempt: %s (%s), want preempted by the gang", tk.Index, first.State, first.Reason)
		}
	}
}
