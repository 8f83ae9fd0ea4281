//go:build linux

package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gpulayer/gpulayer/agent/devices"
	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// withDeviceNodes is a device source whose GPUs' device files are the
// test's (nvml.Source names /dev/nvidia<minor>).
type withDeviceNodes struct {
	devices.Source
	nodes map[string]string
}

func (s withDeviceNodes) DeviceNodes(context.Context) (map[string]string, error) {
	return s.nodes, nil
}

// The attack: CUDA_VISIBLE_DEVICES only steers CUDA, and a task opened
// the device file of a GPU it was not given. Each GPU here has a device
// file of its own (with /dev/zero's numbers, so that it opens without a
// GPU); a one-GPU task tries them all and opens its own alone.
func TestTaskOpensOnlyTheGPUsItWasGiven(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the sandbox, and device files to make")
	}
	dir := dirForTasks(t, "gpu-nodes-", 0o755)
	seed := filepath.Join(t.TempDir(), "fence")
	src, err := devices.OpenSeeded(t.Context(), nil, "dgxh100", seed)
	if err != nil {
		t.Fatal(err)
	}
	gpus, err := src.Devices(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	nodes := map[string]string{}
	var paths []string
	for _, g := range gpus {
		n := filepath.Join(dir, fmt.Sprintf("nvidia%d", g.Index))
		if err := unix.Mknod(n, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 5))); err != nil {
			t.Skipf("no device files here: %v", err)
		}
		if err := os.Chmod(n, 0o666); err != nil {
			t.Fatal(err)
		}
		nodes[g.UUID] = n
		paths = append(paths, n)
	}
	h := startCoordinator(t)
	admin := h.Client(t, h.AdminToken)
	ra := startAgent(t, h.URL, h.JoinToken, "fenced", "", agentOpts{source: withDeviceNodes{src, nodes}, dataDir: seed})
	coordinatortest.WaitFor(t, 20*time.Second, "the agent to register", func() bool { return ra.agent.WorkerID() == "fenced" })
	script := `for n in "$@"; do if head -c 1 "$n" >/dev/null 2>&1; then echo "$n opened"; else echo "$n refused"; fi; done`
	spec := execSpec(script, 1)
	spec.Config = []byte(`{"command":"sh","args":["-c",` + quote(script) + `,"sh",` + quoteAll(paths) + `]}`)
	job, err := admin.SubmitJob(t.Context(), spec)
	if err != nil {
		t.Fatal(err)
	}
	j := waitJob(t, admin, job.ID, terminal, "the probing task")
	if j.State != api.TaskSucceeded || len(j.Tasks) != 1 || len(j.Tasks[0].Devices) != 1 {
		t.Fatalf("job %s: %+v", j.State, j.Tasks)
	}
	mine := nodes[j.Tasks[0].Devices[0]]
	out := logsOf(t, admin, job.ID)
	for _, n := range paths {
		want := n + " refused"
		if n == mine {
			want = n + " opened"
		}
		if !strings.Contains(out, want+"\n") {
			t.Errorf("task output %q: want %q", out, want)
		}
	}
}

// quoteAll is paths as JSON strings, comma-separated.
func quoteAll(paths []string) string {
	q := make([]string, len(paths))
	for i, p := range paths {
		q[i] = quote(p)
	}
	return strings.Join(q, ",")
}
