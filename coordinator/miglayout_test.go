package coordinator_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/auth"
	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// a100 is an A100 80 GB as an agent reports it, whole.
func a100(i int, uuid string) api.Device {
	return api.Device{Index: i, UUID: uuid, Name: "NVIDIA A100-SXM4-80GB", MemoryMiB: 81920, ComputeCapability: "8.0", Healthy: true, Health: api.HealthHealthy}
}

// An admin asks for a GPU's MIG layout over HTTP on a real single-node
// cluster: bad input is refused with its code and changes nothing; the
// request holds the GPU (its record says why, and nothing is placed on
// it), the worker's heartbeat answer orders the layout, and the agent's
// report of the new MIG devices with the order's generation settles it:
// applied, the MIG devices offered without a new approval, a MIG task
// placed on one. Audited.
func TestMIGLayoutOverHTTP(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	ctx := t.Context()
	admin := h.Client(t, h.AdminToken)
	reg, err := h.Client(t, h.JoinToken).Register(ctx, api.RegisterRequest{WorkerID: "w1", Capabilities: []string{"*"}, Executors: []string{"exec"},
		Devices: []api.Device{a100(0, "GPU-a"), a100(1, "GPU-b"), {Index: 2, UUID: "GPU-l4", Name: "NVIDIA L4", MemoryMiB: 23034, Healthy: true}}})
	if err != nil {
		t.Fatal(err)
	}
	worker := h.Client(t, reg.WorkerToken)

	path := "/v1/workers/w1/devices/GPU-a/mig"
	for _, c := range []struct {
		name   string
		method string
		path   string
		token  string
		body   string
		status int
		code   api.Code
	}{
		{"unknown GPU", "PUT", "/v1/workers/w1/devices/GPU-z/mig", h.AdminToken, `{"layout":["3g.40gb"]}`, http.StatusNotFound, api.CodeNotFound},
		{"unknown worker", "PUT", "/v1/workers/nobody/devices/GPU-a/mig", h.AdminToken, `{"layout":["3g.40gb"]}`, http.StatusNotFound, api.CodeNotFound},
		{"no layout", "PUT", path, h.AdminToken, `{}`, http.StatusBadRequest, api.CodeInvalidArgument},
		{"not a profile", "PUT", path, h.AdminToken, `{"layout":["big"]}`, http.StatusBadRequest, api.CodeInvalidArgument},
		{"another model's profile", "PUT", path, h.AdminToken, `{"layout":["3g.20gb"]}`, http.StatusBadRequest, api.CodeInvalidArgument},
		{"too much for the GPU", "PUT", path, h.AdminToken, `{"layout":["4g.40gb","3g.40gb","1g.10gb"]}`, http.StatusBadRequest, api.CodeInvalidArgument},
		{"more than seven", "PUT", path, h.AdminToken, `{"layout":["1g.10gb","1g.10gb","1g.10gb","1g.10gb","1g.10gb","1g.10gb","1g.10gb","1g.10gb"]}`, http.StatusBadRequest, api.CodeInvalidArgument},
		{"an unknown field", "PUT", path, h.AdminToken, `{"layout":[],"force":true}`, http.StatusBadRequest, api.CodeInvalidArgument},
		{"a GPU without MIG", "PUT", "/v1/workers/w1/devices/GPU-l4/mig", h.AdminToken, `{"layout":["1g.5gb"]}`, http.StatusConflict, api.CodeConflict},
		{"no credential", "PUT", path, "", `{"layout":["3g.40gb"]}`, http.StatusUnauthorized, api.CodeUnauthenticated},
		{"a submit client", "PUT", path, mintClient(t, h, "mig-submit", auth.RoleSubmit), `{"layout":["3g.40gb"]}`, http.StatusForbidden, api.CodeForbidden},
		{"the worker itself", "PUT", path, reg.WorkerToken, `{"layout":["3g.40gb"]}`, http.StatusForbidden, api.CodeForbidden},
		{"clear with a body", "DELETE", path, h.AdminToken, `{"layout":[]}`, http.StatusBadRequest, api.CodeInvalidArgument},
	} {
		r := call(t, h.URL, c.method, c.path, c.token, []byte(c.body), nil)
		if r.status != c.status || r.body.Error == nil || r.body.Error.Code != c.code {
			t.Errorf("%s: %d %s, want %d %s", c.name, r.status, r.raw, c.status, c.code)
		}
	}
	if w, _ := admin.Worker(ctx, "w1"); len(w.MIGLayouts) != 0 || slices.ContainsFunc(w.Devices, func(d api.Device) bool { return !d.Healthy }) {
		t.Fatalf("a refused request changed the record: %+v", w.Devices)
	}
	if beat, err := worker.Heartbeat(ctx, api.HeartbeatRequest{}); err != nil || len(beat.MIGLayouts) != 0 {
		t.Fatalf("a refused request reached the agent: %+v %v", beat, err)
	}

	w, err := admin.SetMIGLayout(ctx, "w1", "GPU-a", []string{"3g.40gb", "3g.40gb"})
	if err != nil {
		t.Fatal(err)
	}
	d := w.Devices[0]
	if len(w.MIGLayouts) != 1 || w.MIGLayouts[0].UUID != "GPU-a" || w.MIGLayouts[0].State != api.MIGLayoutPending || d.Healthy || !strings.Contains(d.HealthReason, "MIG repartition to 3g.40gb,3g.40gb pending") {
		t.Fatalf("the GPU's record after the request: %+v %+v", d, w.MIGLayouts)
	}
	if _, err := admin.SubmitJob(ctx, api.JobSpec{Executor: "exec", Config: []byte(`{"command":"true"}`), Count: 2, Resources: &api.Resources{GPUs: 1}}); err != nil {
		t.Fatal(err)
	}
	acq, err := worker.Acquire(ctx, api.AcquireRequest{WaitSeconds: 1, MaxTasks: 3})
	if err != nil || len(acq.Tasks) != 2 || slices.ContainsFunc(acq.Tasks, func(a api.Assignment) bool { return a.Devices[0] == "GPU-a" }) {
		t.Fatalf("acquire beside a GPU awaiting its layout: %+v %v, want two tasks, on GPU-b and the L4", acq, err)
	}
	running := []string{acq.Tasks[0].ID, acq.Tasks[1].ID}
	beat, err := worker.Heartbeat(ctx, api.HeartbeatRequest{RunningTaskIDs: running})
	if err != nil || len(beat.MIGLayouts) != 1 || beat.MIGLayouts[0].UUID != "GPU-a" || !slices.Equal(beat.MIGLayouts[0].Layout, []string{"3g.40gb", "3g.40gb"}) {
		t.Fatalf("the heartbeat's order: %+v %v", beat, err)
	}
	gen := beat.MIGLayouts[0].Generation

	// The agent reports the GPU split as asked.
	gpuA := a100(0, "GPU-a")
	gpuA.MIGEnabled, gpuA.MIGRequest = true, gen
	mig := func(uuid string) api.Device {
		return api.Device{Index: 0, UUID: uuid, Parent: "GPU-a", Name: "NVIDIA A100-SXM4-80GB MIG 3g.40gb", MIGProfile: "3g.40gb", MemoryMiB: 40192, ComputeCapability: "8.0", Healthy: true, Health: api.HealthHealthy}
	}
	report := []api.Device{gpuA, mig("MIG-a1"), mig("MIG-a2"), a100(1, "GPU-b"), {Index: 2, UUID: "GPU-l4", Name: "NVIDIA L4", MemoryMiB: 23034, Healthy: true}}
	beat, err = worker.Heartbeat(ctx, api.HeartbeatRequest{RunningTaskIDs: running, Devices: report, Executors: []string{"exec"}})
	if err != nil || len(beat.MIGLayouts) != 0 {
		t.Fatalf("the heartbeat after the report: %+v %v, want no order left", beat, err)
	}
	w, err = admin.Worker(ctx, "w1")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range w.Devices[:3] {
		if !d.Healthy || d.PendingApproval {
			t.Errorf("after the layout applied: %+v", d)
		}
	}
	if l := w.MIGLayouts; len(l) != 1 || l[0].State != api.MIGLayoutApplied || l[0].RequestedBy == "" || l[0].SettledAt == "" {
		t.Fatalf("the worker's mig_layouts: %+v", l)
	}
	if _, err := admin.SubmitJob(ctx, api.JobSpec{Executor: "exec", Config: []byte(`{"command":"true"}`), Resources: &api.Resources{GPUs: 1, MIGProfile: "3g.40gb"}}); err != nil {
		t.Fatal(err)
	}
	acq, err = worker.Acquire(ctx, api.AcquireRequest{WaitSeconds: 1})
	if err != nil || acq.Task == nil || !strings.HasPrefix(acq.Task.Devices[0], "MIG-a") {
		t.Fatalf("a MIG task after the repartition: %+v %v", acq, err)
	}
	if _, err := admin.ClearMIGLayout(ctx, "w1", "GPU-a"); err != nil {
		t.Fatal(err)
	}
	audit, err := admin.Audit(ctx, client.AuditQuery{Kinds: []string{"gpu.mig_requested", "gpu.mig_applied", "gpu.mig_cleared"}})
	if err != nil || len(audit.Events) != 3 || audit.Events[0].Detail != "3g.40gb,3g.40gb" {
		t.Fatalf("audit: %+v %v", audit, err)
	}
}
