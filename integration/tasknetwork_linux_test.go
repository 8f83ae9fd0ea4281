package integration

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// The attack: a task on the host's network reaches every local port (the
// coordinator's HTTP port, the agent's metrics, another task's server).
// On an agent run with --task-network isolated, a task reaches neither the
// local coordinator's HTTP port nor its Raft port; a gang member, whose
// ranks meet over the network, still reaches the HTTP port.
func TestIsolatedTaskReachesNoLocalPort(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the task sandbox and its network namespace")
	}
	h, raftPort, httpPort, cfg := localPortProbe(t)
	ra := startAgent(t, h.URL, h.JoinToken, "isolated", "dgxh100", agentOpts{isolateNetwork: true})
	coordinatortest.WaitFor(t, 20*time.Second, "the agent to register", func() bool { return ra.agent.WorkerID() == "isolated" })
	admin := h.Client(t, h.AdminToken)
	for _, tc := range []struct {
		name string
		spec api.JobSpec
		want []string
	}{
		{"a task", api.JobSpec{Executor: "exec", Config: cfg}, []string{raftPort + " refused", httpPort + " refused"}},
		{"a gang member", api.JobSpec{Executor: "exec", Config: cfg, Count: 2, Gang: true}, []string{httpPort + " reached"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			job, err := admin.SubmitJob(t.Context(), tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			if j := waitJob(t, admin, job.ID, terminal, "the probing job"); j.State != api.TaskSucceeded {
				t.Fatalf("job %s: %+v", j.State, j.Tasks)
			}
			out := logsOf(t, admin, job.ID)
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("task output %q, want %q", out, w)
				}
			}
		})
	}
}
