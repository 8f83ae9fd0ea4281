//go:build cgo && linux

package integration

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/agent/devices/nvml/nvmltest"
	"github.com/gpulayer/gpulayer/agent/fabric"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// fakeFabric writes a sysfs listing of RDMA adapters: mlx5_0 on NUMA
// node 0 and mlx5_1 on node 1 with a port up each, mlx5_2 (node 1) with
// its port down.
func fakeFabric(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	adapter := func(name, numa, state string) {
		port := filepath.Join(root, name, "ports", "1")
		for p, v := range map[string]string{
			filepath.Join(root, name, "device", "numa_node"): numa,
			filepath.Join(port, "state"):                     state,
			filepath.Join(port, "link_layer"):                fabric.LinkInfiniBand,
		} {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(v+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	adapter("mlx5_0", "0", "4: ACTIVE")
	adapter("mlx5_1", "1", "4: ACTIVE")
	adapter("mlx5_2", "1", "1: DOWN")
	return root
}

// An agent on a host with InfiniBand advertises it as a capability, and
// with NCCL hints on, a GPU task is told the ports that are up, those on
// its GPU's NUMA node first, with the operator's socket interface; a job
// that sets NCCL_IB_HCA itself keeps its own value; a task with no GPU
// is told nothing.
func TestNCCLHintsThroughAnAgent(t *testing.T) {
	h := startCoordinator(t)
	admin := h.Client(t, h.AdminToken)
	ag := startAgent(t, h.URL, h.JoinToken, "node-ib", "", agentOpts{
		source:      fixtureSource(t, nvmltest.New("dgxh100", nvmltest.StableUUIDs(), nvmltest.WithTopology(nvmltest.TopologyNVSwitch))),
		fabricSysfs: fakeFabric(t),
		nccl:        fabric.Hints{Enabled: true, SocketIfname: "eth0"},
	})
	ctx := t.Context()
	waitJob(t, admin, mustSubmit(t, admin, execSpec(`true`, 0)).ID, terminal, "the agent to take work")
	w, err := admin.Worker(ctx, "node-ib")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(w.Capabilities, fabric.CapInfiniBand) {
		t.Fatalf("worker capabilities %v lack %s", w.Capabilities, fabric.CapInfiniBand)
	}

	numaOf := map[string]int{}
	for _, d := range ag.gpus {
		if d.NUMANode != nil {
			numaOf[d.UUID] = *d.NUMANode
		}
	}
	show := `echo "hca=$NCCL_IB_HCA disable=$NCCL_IB_DISABLE if=$NCCL_SOCKET_IFNAME"`
	one := waitJob(t, admin, mustSubmit(t, admin, execSpec(show, 1)).ID, terminal, "the one-GPU job")
	if one.State != api.TaskSucceeded {
		t.Fatalf("one-GPU job ended %s", one.State)
	}
	want := "hca==mlx5_0:1,mlx5_1:1 disable= if=eth0"
	if n, ok := numaOf[one.Tasks[0].Devices[0]]; !ok {
		t.Fatalf("GPU %s has no NUMA node in the inventory", one.Tasks[0].Devices[0])
	} else if n == 1 {
		want = "hca==mlx5_1:1,mlx5_0:1 disable= if=eth0"
	}
	if got := strings.TrimSpace(logsOf(t, admin, one.ID)); got != want {
		t.Fatalf("one-GPU task saw %q, want %q", got, want)
	}

	own := execSpec(show, 1)
	own.Config = []byte(`{"command":"sh","args":["-c",` + quote(show) + `],"env":{"NCCL_IB_HCA":"mlx5_9"}}`)
	mine := waitJob(t, admin, mustSubmit(t, admin, own).ID, terminal, "the job with its own NCCL_IB_HCA")
	if got := strings.TrimSpace(logsOf(t, admin, mine.ID)); got != "hca=mlx5_9 disable= if=eth0" {
		t.Fatalf("a job's own NCCL_IB_HCA: task saw %q", got)
	}

	none := waitJob(t, admin, mustSubmit(t, admin, execSpec(show, 0)).ID, terminal, "the job with no GPU")
	if got := strings.TrimSpace(logsOf(t, admin, none.ID)); got != "hca= disable= if=" {
		t.Fatalf("a task with no GPU saw %q", got)
	}
}

// mustSubmit submits spec as c.
func mustSubmit(t *testing.T, c interface {
	SubmitJob(context.Context, api.JobSpec) (api.Job, error)
}, spec api.JobSpec) api.Job {
	t.Helper()
	j, err := c.SubmitJob(t.Context(), spec)
	if err != nil {
		t.Fatal(err)
	}
	return j
}
