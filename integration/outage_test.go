package integration

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/agent"
	"github.com/gpulayer/gpulayer/agent/spool"
	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// spoolFiles counts the reports waiting in an agent's spool.
func spoolFiles(t *testing.T, dataDir string) int {
	t.Helper()
	recs, err := spool.Peek(filepath.Join(dataDir, agent.ReportSpoolDir))
	if err != nil {
		t.Fatalf("read the spool: %v", err)
	}
	return len(recs)
}

// Done work stays done: a task that succeeds while two of three
// coordinators are down, on an agent that is restarted before they come
// back, is recorded succeeded once the quorum returns, by the attempt
// that ran it, and never runs again. Before the report spool, the agent
// dropped the finish it could not send, the lease lapsed once a leader
// was back, and the task ran a second time.
func TestFinishedWorkSurvivesQuorumLossAndAgentRestart(t *testing.T) {
	c := startCluster(t, nil)
	admin := c.Client(c.AdminToken)
	ctx := t.Context()
	urls := strings.Join(c.URLs(), ",")
	dir := filepath.Join(t.TempDir(), "node")
	first := startAgent(t, urls, c.JoinToken, "spooler", "dgxh100", agentOpts{dataDir: dir})

	spec := execSpec("sleep 4", 0) // no output: no log chunk waits out the client's retries first
	spec.LeaseSeconds = 5
	spec.MaxAttempts = 3
	job, err := admin.SubmitJob(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	waitJob(t, admin, job.ID, func(j api.Job) bool { return j.Tasks[0].State == api.TaskRunning }, "the task to run")

	// Two of three coordinators go away while the task runs: no quorum.
	leader := c.Leader()
	stopped := []*coordinatortest.Node{leader}
	for _, n := range c.Nodes {
		if n != leader && len(stopped) < 2 {
			stopped = append(stopped, n)
		}
	}
	for _, n := range stopped {
		c.Stop(n)
	}
	// The task ends during the outage: its finish waits in the spool.
	coordinatortest.WaitFor(t, 30*time.Second, "the finish to wait in the spool", func() bool { return spoolFiles(t, dir) == 1 })

	// The agent restarts during the outage (its stop tries the report
	// once more, in vain) and finds the report in its spool.
	if err := first.stop(); err != nil {
		t.Fatalf("first run: %v", err)
	}
	if n := spoolFiles(t, dir); n != 1 {
		t.Fatalf("%d reports in the spool after the restart, want the finish", n)
	}
	startAgent(t, urls, "", "spooler", "dgxh100", agentOpts{dataDir: dir})

	// The quorum comes back, past the task's lease.
	for _, n := range stopped {
		c.Restart(n)
	}
	j := waitJob(t, admin, job.ID, terminal, "the job to end once the quorum is back")
	task := j.Tasks[0]
	if j.State != api.TaskSucceeded || len(task.Attempts) != 1 {
		t.Fatalf("job %s with %d attempts, want succeeded by its one attempt: %+v", j.State, len(task.Attempts), task.Attempts)
	}
	if a := task.Attempts[0]; a.State != api.TaskSucceeded || a.WorkerID != "spooler" {
		t.Fatalf("attempt %+v", a)
	}
	coordinatortest.WaitFor(t, 10*time.Second, "the spool to empty", func() bool { return spoolFiles(t, dir) == 0 })
	checkInvariants(t, admin, []string{job.ID}, api.TaskSucceeded)
}
