package coordinator_test

import (
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// A worker that claims an H100 with half an H100's memory keeps the
// device on its record, not offered, saying why; its healthy GPU is
// offered as usual; a heartbeat repeating the claim writes nothing new.
func TestDeviceReportContradictingItsModelIsNotOffered(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	ctx := t.Context()
	admin := h.Client(t, h.AdminToken)
	devs := []api.Device{
		{Index: 0, UUID: "GPU-real", Name: "NVIDIA H100 80GB HBM3", MemoryMiB: 81559, ComputeCapability: "9.0", Healthy: true},
		{Index: 1, UUID: "GPU-claimed", Name: "NVIDIA H100 80GB HBM3", MemoryMiB: 40960, ComputeCapability: "9.0", Healthy: true},
	}
	reg, err := h.Client(t, h.JoinToken).Register(ctx, api.RegisterRequest{WorkerID: "claims", Capabilities: []string{"*"}, Executors: []string{"exec"}, Devices: devs})
	if err != nil {
		t.Fatal(err)
	}
	w, err := admin.Worker(ctx, "claims")
	if err != nil {
		t.Fatal(err)
	}
	if d := w.Devices[1]; d.Healthy || d.Health != api.HealthUnknown || !strings.Contains(d.HealthReason, "reports 40960 MiB") {
		t.Fatalf("the contradicting device is kept as %+v", d)
	}
	if d := w.Devices[0]; !d.Healthy {
		t.Fatalf("the consistent device is not offered: %+v", d)
	}
	job, err := admin.SubmitJob(ctx, api.JobSpec{Executor: "exec", Config: []byte(`{"command":"true"}`), Resources: &api.Resources{GPUs: 2}})
	if err != nil {
		t.Fatal(err)
	}
	worker := h.Client(t, reg.WorkerToken)
	if acq, err := worker.Acquire(ctx, api.AcquireRequest{}); err != nil || acq.Task != nil {
		t.Fatalf("a two-GPU task went to a worker with one GPU to offer: %+v %v", acq, err)
	}
	j, err := admin.Job(ctx, job.ID)
	if err != nil || !strings.Contains(j.Tasks[0].PendingReason, "healthy now is 1") {
		t.Fatalf("pending reason %q %v", j.Tasks[0].PendingReason, err)
	}
	before, _ := admin.Audit(ctx, client.AuditQuery{Kinds: []string{"gpu"}})
	if _, err := worker.Heartbeat(ctx, api.HeartbeatRequest{Devices: devs}); err != nil {
		t.Fatal(err)
	}
	after, _ := admin.Audit(ctx, client.AuditQuery{Kinds: []string{"gpu"}})
	if len(after.Events) != len(before.Events) {
		t.Fatalf("a heartbeat repeating the report changed the record: %d gpu events, then %d", len(before.Events), len(after.Events))
	}
}

// A join token that pins GPU models refuses a worker reporting another
// model (and is not used up by it), and keeps out of service a GPU of
// another model its worker reports later.
func TestJoinTokenPinsGPUModels(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	ctx := t.Context()
	admin := h.Client(t, h.AdminToken)
	tok := mintJoin(t, admin, api.CreateTokenRequest{Kind: api.TokenKindJoin, Name: "h100-pool", GPUModels: []string{"NVIDIA H100 80GB HBM3"}})
	h100 := api.Device{Index: 0, UUID: "GPU-h", Name: "NVIDIA H100 80GB HBM3", MemoryMiB: 81559, ComputeCapability: "9.0", Healthy: true}
	a100 := api.Device{Index: 1, UUID: "GPU-a", Name: "NVIDIA A100-SXM4-80GB", MemoryMiB: 81920, ComputeCapability: "8.0", Healthy: true}
	joiner := h.Client(t, tok.Token)
	_, err := joiner.Register(ctx, api.RegisterRequest{WorkerID: "mixed", Executors: []string{"exec"}, Devices: []api.Device{h100, a100}})
	if !client.IsCode(err, api.CodeForbidden) || !strings.Contains(err.Error(), "NVIDIA A100-SXM4-80GB") {
		t.Fatalf("registering an A100 with an H100 token: %v, want forbidden naming the model", err)
	}
	toks, err := admin.Tokens(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, info := range toks {
		if info.ID == tok.ID && (info.Uses != 0 || len(info.GPUModels) != 1) {
			t.Fatalf("the token after a refused registration: %+v", info)
		}
	}
	reg, err := joiner.Register(ctx, api.RegisterRequest{WorkerID: "pure", Executors: []string{"exec"}, Devices: []api.Device{h100}})
	if err != nil {
		t.Fatal(err)
	}
	worker := h.Client(t, reg.WorkerToken)
	if _, err := worker.Heartbeat(ctx, api.HeartbeatRequest{Devices: []api.Device{h100, a100}}); err != nil {
		t.Fatal(err)
	}
	w, err := admin.Worker(ctx, "pure")
	if err != nil || len(w.Devices) != 2 {
		t.Fatalf("worker: %+v %v", w, err)
	}
	if d := w.Devices[1]; d.Healthy || !strings.Contains(d.HealthReason, "join token admits") {
		t.Fatalf("the A100 that appeared later is %+v", d)
	}
	if !w.Devices[0].Healthy {
		t.Fatalf("the admitted H100 is not offered: %+v", w.Devices[0])
	}
	r := call(t, h.URL, "POST", "/v1/tokens", h.AdminToken, []byte(`{"kind":"client","name":"x","gpu_models":["NVIDIA H100 80GB HBM3"]}`), nil)
	wantCode(t, "gpu_models on a client token", r, 400, api.CodeInvalidArgument)
}

// A device whose PCI id is another model's is not offered: a worker
// cannot dress an A100 up as an H100 by its name and memory alone. A
// malformed PCI id is refused outright.
func TestDeviceWithAnotherModelsPCIIDIsNotOffered(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	ctx := t.Context()
	admin := h.Client(t, h.AdminToken)
	devs := []api.Device{
		{Index: 0, UUID: "GPU-true", Name: "NVIDIA H100 80GB HBM3", MemoryMiB: 81559, ComputeCapability: "9.0", PCIDevice: "10de:2330", Healthy: true},
		{Index: 1, UUID: "GPU-dressed", Name: "NVIDIA H100 80GB HBM3", MemoryMiB: 81559, ComputeCapability: "9.0", PCIDevice: "10de:20b0", Healthy: true},
	}
	if _, err := h.Client(t, h.JoinToken).Register(ctx, api.RegisterRequest{WorkerID: "dressed", Capabilities: []string{"*"}, Executors: []string{"exec"}, Devices: devs}); err != nil {
		t.Fatal(err)
	}
	w, err := admin.Worker(ctx, "dressed")
	if err != nil {
		t.Fatal(err)
	}
	if d := w.Devices[1]; d.Healthy || !strings.Contains(d.HealthReason, "reports PCI device 10de:20b0, but a NVIDIA H100 80GB HBM3 is 10de:2330") {
		t.Fatalf("the dressed-up device is kept as %+v", d)
	}
	if d := w.Devices[0]; !d.Healthy || d.PCIDevice != "10de:2330" {
		t.Fatalf("the true one: %+v", d)
	}
	bad := devs[:1]
	bad[0].PCIDevice = "nvidia"
	_, err = h.Client(t, h.JoinToken).Register(ctx, api.RegisterRequest{WorkerID: "garbled", Capabilities: []string{"*"}, Executors: []string{"exec"}, Devices: bad})
	if !client.IsCode(err, api.CodeInvalidArgument) || !strings.Contains(err.Error(), "pci_device") {
		t.Fatalf("a malformed PCI id: %v, want invalid_argument naming pci_device", err)
	}
}
