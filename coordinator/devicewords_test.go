package coordinator_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// Devices as PROTOCOL.md writes them: a `health` word and no `healthy`
// flag (the project's own addition), MIG instances naming their GPU as
// `parent_uuid`. A worker registered so is given work on its healthy
// GPU; a record never shows `health: healthy` for a GPU that is not
// offered, whatever keeps it from being offered.
func TestDevicesAsTheContractWritesThem(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	ctx := t.Context()
	admin := h.Client(t, h.AdminToken)

	register := func(id, devices string) rawResp {
		body := `{"worker_id":"` + id + `","capabilities":["*"],"executors":["exec"],"devices":` + devices + `}`
		return call(t, h.URL, http.MethodPost, "/v1/workers/register", h.JoinToken, []byte(body), nil)
	}
	var reg api.RegisterResponse
	decodeOK(t, register("wh", `[{"index":0,"uuid":"GPU-h0","name":"NVIDIA H100 80GB HBM3","memory_mib":81920,"compute_capability":"9.0","health":"healthy"}]`), http.StatusCreated, &reg)
	rec, err := admin.Worker(ctx, "wh")
	if err != nil {
		t.Fatal(err)
	}
	if d := rec.Devices[0]; !d.Healthy || d.Health != api.HealthHealthy {
		t.Fatalf("a device reported healthy by its health word: %+v", d)
	}
	job, err := admin.SubmitJob(ctx, api.JobSpec{Executor: "exec", Config: []byte(`{"command":"true"}`), Count: 1, Resources: &api.Resources{GPUs: 1}})
	if err != nil {
		t.Fatal(err)
	}
	acq, err := h.Client(t, reg.WorkerToken).Acquire(ctx, api.AcquireRequest{WaitSeconds: 2})
	if err != nil || acq.Task == nil || acq.Task.JobID != job.ID || len(acq.Task.Devices) != 1 || acq.Task.Devices[0] != "GPU-h0" {
		t.Fatalf("acquire on a GPU reported healthy by its health word: %+v %v", acq, err)
	}

	// The word healthy on a device not reported whole (an agent of an
	// earlier release sends it so, with the flag false, for a GPU its
	// inventory could not read: no memory) is not taken as offered.
	decodeOK(t, register("wo", `[{"index":0,"uuid":"GPU-o0","health":"healthy","healthy":false}]`), http.StatusCreated, nil)
	noHealthyUnlessOffered(t, h, "wo")
	if rec, _ := admin.Worker(ctx, "wo"); rec.Devices[0].Healthy {
		t.Fatalf("a device without its name or memory was offered: %+v", rec.Devices[0])
	}

	// An unhealthy word is not offered, whatever flag comes with it: the
	// flag claiming otherwise is refused, and nothing is registered.
	wantCode(t, "healthy flag against an unhealthy word", register("wx", `[{"index":0,"uuid":"GPU-x0","name":"H100","memory_mib":81920,"health":"unhealthy","healthy":true}]`), http.StatusBadRequest, api.CodeInvalidArgument)
	if _, err := admin.Worker(ctx, "wx"); err == nil {
		t.Fatal("a refused registration registered the worker")
	}

	// MIG instances name their GPU as parent_uuid, and the record says
	// it the same way; the older name is still read.
	mig := func(parentField string) string {
		return `[{"index":0,"uuid":"GPU-m0","name":"NVIDIA A100-SXM4-80GB","memory_mib":81920,"compute_capability":"8.0","health":"healthy","mig_enabled":true},` +
			`{"index":0,"uuid":"MIG-m0a","name":"NVIDIA A100-SXM4-80GB MIG 3g.40gb","memory_mib":40192,"health":"healthy","mig_profile":"3g.40gb","` + parentField + `":"GPU-m0"}]`
	}
	var regM api.RegisterResponse
	decodeOK(t, register("wm", mig("parent_uuid")), http.StatusCreated, &regM)
	decodeOK(t, register("wl", mig("parent")), http.StatusCreated, nil)
	for _, id := range []string{"wm", "wl"} {
		r := call(t, h.URL, http.MethodGet, "/v1/workers/"+id, h.AdminToken, nil, nil)
		if r.status != http.StatusOK || !strings.Contains(string(r.raw), `"parent_uuid":"GPU-m0"`) || strings.Contains(string(r.raw), `"parent":`) {
			t.Fatalf("%s: %d %s", id, r.status, r.raw)
		}
	}
	both := strings.Replace(mig("parent_uuid"), `"parent_uuid":"GPU-m0"`, `"parent_uuid":"GPU-m0","parent":"GPU-other"`, 1)
	wantCode(t, "two different parents", register("wb", both), http.StatusBadRequest, api.CodeInvalidArgument)

	// Not offered, never healthy: a worker that drains, and a GPU that
	// awaits approval.
	hour := 3600
	if _, err := admin.DrainWorker(ctx, "wh", &hour); err != nil {
		t.Fatal(err)
	}
	noHealthyUnlessOffered(t, h, "wh")
	var fleet api.GPUList
	decodeOK(t, call(t, h.URL, http.MethodGet, "/v1/gpus", h.AdminToken, nil, nil), http.StatusOK, &fleet)
	for _, g := range fleet.GPUs {
		if !g.Healthy && (g.Health == api.HealthHealthy || g.Health == api.HealthDegraded) {
			t.Errorf("GET /v1/gpus: %s of %s (%s) is not offered and reads %s", g.UUID, g.WorkerID, g.WorkerStatus, g.Health)
		}
	}
	wm := h.Client(t, regM.WorkerToken)
	if _, err := wm.Heartbeat(ctx, api.HeartbeatRequest{Devices: []api.Device{{Index: 0, UUID: "GPU-new", Name: "NVIDIA H100 80GB HBM3", MemoryMiB: 81920, ComputeCapability: "9.0", Health: api.HealthHealthy}}}); err != nil {
		t.Fatal(err)
	}
	noHealthyUnlessOffered(t, h, "wm")
}

// noHealthyUnlessOffered checks that worker id's record shows no device
// with health healthy that is not offered (healthy false).
func noHealthyUnlessOffered(t *testing.T, h *coordinatortest.Harness, id string) {
	t.Helper()
	rec, err := h.Client(t, h.AdminToken).Worker(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range rec.Devices {
		if !d.Healthy && (d.Health == api.HealthHealthy || d.Health == api.HealthDegraded) {
			t.Errorf("worker %s (%s): device %s is not offered and reads %s: %+v", id, rec.Status, d.UUID, d.Health, d)
		}
		if !d.Healthy && d.HealthReason == "" {
			t.Errorf("worker %s: device %s is not offered and says not why", id, d.UUID)
		}
	}
}

// Uncordoning a GPU the worker neither has nor had cordoned is 404, as
// cordoning it is; times in answers are the contract's milliseconds.
func TestUncordonAnUnknownGPUAndTimesInAnswers(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	worker := twoGPUWorker(t, h)
	for _, path := range []string{"/v1/workers/w1/devices/GPU-z/uncordon", "/v1/workers/w1/devices/GPU-z/cordon"} {
		wantCode(t, path, call(t, h.URL, http.MethodPost, path, h.AdminToken, []byte(`{}`), nil), http.StatusNotFound, api.CodeNotFound)
	}
	if _, err := worker.Heartbeat(t.Context(), api.HeartbeatRequest{}); err != nil {
		t.Fatal(err)
	}
	r := call(t, h.URL, http.MethodGet, "/v1/workers/w1", h.AdminToken, nil, nil)
	var w struct {
		Worker struct {
			LastHeartbeat string `json:"last_heartbeat"`
		} `json:"worker"`
	}
	decodeOK(t, r, http.StatusOK, &w)
	at, err := time.Parse(time.RFC3339Nano, w.Worker.LastHeartbeat)
	if err != nil || api.FormatTime(at) != w.Worker.LastHeartbeat {
		t.Fatalf("last_heartbeat %q is not in the contract's form (%v)", w.Worker.LastHeartbeat, err)
	}
}
