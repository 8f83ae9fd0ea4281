package coordinator_test

import (
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// Over HTTP: a GPU a worker reports that it did not register with is shown
// awaiting approval and gets no work (an agent cannot mark its own GPUs
// approved); an admin's approval brings it into service.
func TestChangedInventoryAwaitsApprovalOverHTTP(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	ctx := t.Context()
	admin := h.Client(t, h.AdminToken)
	gpu := func(i int, uuid string) api.Device {
		return api.Device{Index: i, UUID: uuid, Name: "NVIDIA H100 80GB HBM3", MemoryMiB: 81559, ComputeCapability: "9.0", Healthy: true}
	}
	reg, err := h.Client(t, h.JoinToken).Register(ctx, api.RegisterRequest{WorkerID: "swap", Capabilities: []string{"*"}, Executors: []string{"exec"}, Devices: []api.Device{gpu(0, "GPU-a")}})
	if err != nil {
		t.Fatal(err)
	}
	worker := h.Client(t, reg.WorkerToken)
	if _, err := worker.Heartbeat(ctx, api.HeartbeatRequest{Devices: []api.Device{gpu(0, "GPU-a"), gpu(1, "GPU-b")}, Executors: []string{"exec"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.SubmitJob(ctx, api.JobSpec{Executor: "exec", Config: []byte(`{"command":"true"}`), Resources: &api.Resources{GPUs: 2}}); err != nil {
		t.Fatal(err)
	}
	if got, err := worker.Acquire(ctx, api.AcquireRequest{}); err != nil || got.Task != nil {
		t.Fatalf("acquire with a GPU awaiting approval: %+v %v, want nothing", got, err)
	}
	w, err := admin.Worker(ctx, "swap")
	if err != nil {
		t.Fatal(err)
	}
	b := w.Devices[1]
	if !b.PendingApproval || b.Healthy || !strings.Contains(b.HealthReason, "gpulayer worker approve-gpus swap") || w.Devices[0].PendingApproval {
		t.Fatalf("devices: %+v", w.Devices)
	}
	r := call(t, h.URL, "POST", "/v1/workers/swap/gpus/approve", h.AdminToken, []byte(`{"all":true}`), nil)
	wantCode(t, "a body", r, 400, api.CodeInvalidArgument)
	r = call(t, h.URL, "POST", "/v1/workers/nobody/gpus/approve", h.AdminToken, nil, nil)
	wantCode(t, "an unknown worker", r, 404, api.CodeNotFound)

	w, err = admin.ApproveGPUs(ctx, "swap")
	if err != nil || w.Devices[1].PendingApproval || !w.Devices[1].Healthy {
		t.Fatalf("after the approval: %+v %v", w.Devices, err)
	}
	if got, err := worker.Acquire(ctx, api.AcquireRequest{}); err != nil || got.Task == nil || len(got.Task.Devices) != 2 {
		t.Fatalf("acquire after the approval: %+v %v", got, err)
	}
	// pending_approval is the coordinator's word: an agent sending it is
	// not believed.
	marked := gpu(0, "GPU-a")
	marked.PendingApproval = true
	if _, err := worker.Heartbeat(ctx, api.HeartbeatRequest{Devices: []api.Device{marked, gpu(1, "GPU-b")}}); err != nil {
		t.Fatal(err)
	}
	if w, err := admin.Worker(ctx, "swap"); err != nil || w.Devices[0].PendingApproval {
		t.Fatalf("an agent's pending_approval was kept: %+v %v", w.Devices, err)
	}
}
