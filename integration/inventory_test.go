package integration

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// changingGPUs is a device source whose GPUs a test changes while the
// agent runs.
type changingGPUs struct {
	mu   sync.Mutex
	devs []api.Device
}

func (c *changingGPUs) Devices(context.Context) ([]api.Device, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]api.Device(nil), c.devs...), nil
}

func (c *changingGPUs) Close() error { return nil }

func (c *changingGPUs) set(devs ...api.Device) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.devs = devs
}

func h100(i int, uuid string) api.Device {
	return api.Device{Index: i, UUID: uuid, Name: "NVIDIA H100 80GB HBM3", MemoryMiB: 81559, ComputeCapability: "9.0", Healthy: true}
}

// The agent reads its GPUs again while it runs: a GPU that appears is
// reported at once, shown awaiting approval and given no work; once an
// admin approves, a task that needs it runs.
func TestAgentRereadsItsInventoryAndNewGPUsAwaitApproval(t *testing.T) {
	h := startCoordinator(t)
	admin := h.Client(t, h.AdminToken)
	src := &changingGPUs{devs: []api.Device{h100(0, "GPU-aaaa")}}
	startAgent(t, h.URL, h.JoinToken, "regrow", "", agentOpts{source: src, inventoryInterval: 50 * time.Millisecond})
	coordinatortest.WaitFor(t, 10*time.Second, "registration", func() bool {
		w, err := admin.Worker(t.Context(), "regrow")
		return err == nil && len(w.Devices) == 1
	})
	job, err := admin.SubmitJob(t.Context(), execSpec(`echo "gpus=$CUDA_VISIBLE_DEVICES"`, 2))
	if err != nil {
		t.Fatal(err)
	}
	src.set(h100(0, "GPU-aaaa"), h100(1, "GPU-bbbb"))
	var w api.Worker
	coordinatortest.WaitFor(t, 10*time.Second, "the new GPU reported", func() bool {
		w, err = admin.Worker(t.Context(), "regrow")
		return err == nil && len(w.Devices) == 2
	})
	if d := w.Devices[1]; d.UUID != "GPU-bbbb" || !d.PendingApproval || d.Healthy {
		t.Fatalf("the new GPU: %+v", d)
	}
	j, err := admin.Job(t.Context(), job.ID)
	if err != nil || j.State != api.TaskPending {
		t.Fatalf("the 2-GPU job before the approval: %s %v", j.State, err)
	}
	if _, err := admin.ApproveGPUs(t.Context(), "regrow"); err != nil {
		t.Fatal(err)
	}
	j = waitJob(t, admin, job.ID, terminal, "the job after the approval")
	if j.State != api.TaskSucceeded || !strings.Contains(logsOf(t, admin, job.ID), "GPU-bbbb") {
		t.Fatalf("job %s, logs %q", j.State, logsOf(t, admin, job.ID))
	}
}
