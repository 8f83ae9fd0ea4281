package coordinator_test

import (
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// An admin cordons one GPU over HTTP: the record shows it cordoned, with
// the reason, and not healthy; an acquire gets the other GPU only; the
// cordon lifted, the GPU is given work again. Bad input changes nothing.
func TestCordonGPUOverHTTP(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	ctx := t.Context()
	admin := h.Client(t, h.AdminToken)
	worker := twoGPUWorker(t, h)

	for name, call := range map[string]func() error{
		"unknown GPU":    func() error { _, err := admin.CordonGPU(ctx, "w1", "GPU-z", ""); return err },
		"unknown worker": func() error { _, err := admin.CordonGPU(ctx, "nobody", "GPU-a", ""); return err },
		"reason too long": func() error {
			_, err := admin.CordonGPU(ctx, "w1", "GPU-a", strings.Repeat("r", api.MaxCordonReasonBytes+1))
			return err
		},
		"not an admin": func() error { _, err := worker.CordonGPU(ctx, "w1", "GPU-a", ""); return err },
	} {
		if err := call(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if w, _ := admin.Worker(ctx, "w1"); w.Devices[0].Cordoned || w.Devices[1].Cordoned {
		t.Fatalf("a refused cordon changed the record: %+v", w.Devices)
	}

	w, err := admin.CordonGPU(ctx, "w1", "GPU-a", "fan noise")
	if err != nil {
		t.Fatal(err)
	}
	d := w.Devices[0]
	if !d.Cordoned || d.CordonReason != "fan noise" || d.Healthy || d.Health == api.HealthHealthy || !strings.Contains(d.HealthReason, "cordoned") {
		t.Fatalf("cordoned device %+v", d)
	}
	if _, err := admin.SubmitJob(ctx, api.JobSpec{Executor: "exec", Config: []byte(`{"command":"true"}`), Count: 2, Resources: &api.Resources{GPUs: 1}}); err != nil {
		t.Fatal(err)
	}
	acq, err := worker.Acquire(ctx, api.AcquireRequest{WaitSeconds: 1, MaxTasks: 2})
	if err != nil || acq.Task == nil {
		t.Fatalf("acquire: %+v %v", acq, err)
	}
	got := acq.Tasks
	if len(got) == 0 {
		got = []api.Assignment{*acq.Task}
	}
	if len(got) != 1 || len(got[0].Devices) != 1 || got[0].Devices[0] != "GPU-b" {
		t.Fatalf("assignments beside a cordoned GPU: %+v, want one on GPU-b", got)
	}
	if _, err := admin.UncordonGPU(ctx, "w1", "GPU-a"); err != nil {
		t.Fatal(err)
	}
	again, err := worker.Acquire(ctx, api.AcquireRequest{WaitSeconds: 1})
	if err != nil || again.Task == nil || again.Task.Devices[0] != "GPU-a" {
		t.Fatalf("acquire after the cordon was lifted: %+v %v", again, err)
	}
	audit, err := admin.Audit(ctx, client.AuditQuery{Kinds: []string{"gpu.cordoned", "gpu.uncordoned"}})
	if err != nil || len(audit.Events) != 2 {
		t.Fatalf("audit: %+v %v", audit, err)
	}
}

// twoGPUWorker registers w1 with two healthy GPUs, GPU-a and GPU-b, and
// returns a client acting as it.
func twoGPUWorker(t *testing.T, h *coordinatortest.Harness) *client.Client {
	t.Helper()
	reg, err := h.Client(t, h.JoinToken).Register(t.Context(), api.RegisterRequest{WorkerID: "w1", Capabilities: []string{"*"}, Executors: []string{"exec"},
		Devices: []api.Device{{Index: 0, UUID: "GPU-a", Name: "H100", Healthy: true}, {Index: 1, UUID: "GPU-b", Name: "H100", Healthy: true}}})
	if err != nil {
		t.Fatal(err)
	}
	return h.Client(t, reg.WorkerToken)
}
