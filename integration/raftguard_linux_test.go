package integration

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// A task cannot reach the Raft port of a coordinator on its host: a root
// agent refuses its task uids that port with a netfilter owner rule, while
// the coordinator's HTTP port stays reachable; the rule goes with the
// agent. Before, the task's connection reached the port (and failed only
// in the TLS handshake, for want of the cluster key).
func TestTaskCannotReachALocalRaftPort(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: tasks run under uids of their own, and the rule is netfilter's")
	}
	if err := exec.Command("iptables", "-w", "5", "-S", "OUTPUT").Run(); err != nil {
		t.Skipf("iptables does not work here: %v", err)
	}
	h, raftPort, httpPort, cfg := localPortProbe(t)
	ra := startAgent(t, h.URL, h.JoinToken, "guarded", "dgxh100")
	coordinatortest.WaitFor(t, 20*time.Second, "the agent to register", func() bool { return ra.agent.WorkerID() == "guarded" })
	admin := h.Client(t, h.AdminToken)
	job, err := admin.SubmitJob(t.Context(), api.JobSpec{Executor: "exec", Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if j := waitJob(t, admin, job.ID, terminal, "the probing task"); j.State != api.TaskSucceeded {
		t.Fatalf("job %s: %+v", j.State, j.Tasks)
	}
	out := logsOf(t, admin, job.ID)
	if !strings.Contains(out, raftPort+" refused") || !strings.Contains(out, httpPort+" reached") {
		t.Fatalf("task output %q, want the Raft port %s refused and the HTTP port %s reached", out, raftPort, httpPort)
	}
	if err := ra.stop(); err != nil {
		t.Fatalf("agent: %v", err)
	}
	rules, err := exec.Command("iptables", "-w", "5", "-S", "OUTPUT").Output()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(rules), "gpulayer-raftguard") && strings.Contains(string(rules), "--dport "+raftPort+" ") {
		t.Fatalf("the agent left its rule behind:\n%s", rules)
	}
}

// localPortProbe starts a coordinator and returns it, its Raft and HTTP
// ports, and an exec config whose bash says of each port whether the
// task reached it ("<port> reached" or "<port> refused"). It skips the
// test without bash (its /dev/tcp opens the connections).
func localPortProbe(t *testing.T) (h *coordinatortest.Harness, raftPort, httpPort string, cfg []byte) {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("needs bash (its /dev/tcp opens the connections)")
	}
	h = startCoordinator(t)
	_, raftPort, err := net.SplitHostPort(h.RaftAddr)
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(h.URL)
	if err != nil {
		t.Fatal(err)
	}
	httpPort = u.Port()
	script := fmt.Sprintf(`for p in %s %s; do if (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null; then echo "$p reached"; else echo "$p refused"; fi; done`, raftPort, httpPort)
	return h, raftPort, httpPort, []byte(`{"command":"bash","args":["-c",` + quote(script) + `]}`)
}
