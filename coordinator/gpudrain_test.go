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

// An admin drains one GPU over HTTP on a real single-node cluster: bad
// input is refused with its code and changes nothing; the drain cordons
// the GPU, the task running on it is named in its worker's heartbeat
// answer, and once the worker reports it stopped the task is pending with
// its one attempt unspent (the attempt preempted) and the next acquire
// places it on the other GPU. The drain is audited.
func TestDrainGPUOverHTTP(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	ctx := t.Context()
	admin := h.Client(t, h.AdminToken)
	worker := twoGPUWorker(t, h)
	if _, err := admin.SubmitJob(ctx, api.JobSpec{Executor: "exec", Config: []byte(`{"command":"true"}`), MaxAttempts: 1, Resources: &api.Resources{GPUs: 1}}); err != nil {
		t.Fatal(err)
	}
	acq, err := worker.Acquire(ctx, api.AcquireRequest{WaitSeconds: 1})
	if err != nil || acq.Task == nil {
		t.Fatalf("acquire: %+v %v", acq, err)
	}
	first := acq.Task
	gpu := first.Devices[0]
	if err := worker.Start(ctx, first.ID, first.AttemptID); err != nil {
		t.Fatal(err)
	}

	path := "/v1/workers/w1/devices/" + gpu + "/drain"
	for _, c := range []struct {
		name   string
		path   string
		token  string
		body   string
		status int
		code   api.Code
	}{
		{"unknown GPU", "/v1/workers/w1/devices/GPU-z/drain", h.AdminToken, `{}`, http.StatusNotFound, api.CodeNotFound},
		{"unknown worker", "/v1/workers/nobody/devices/" + gpu + "/drain", h.AdminToken, `{}`, http.StatusNotFound, api.CodeNotFound},
		{"a body that is not JSON", path, h.AdminToken, `{"reason":`, http.StatusBadRequest, api.CodeInvalidArgument},
		{"an unknown field", path, h.AdminToken, `{"reason":"r","now":true}`, http.StatusBadRequest, api.CodeInvalidArgument},
		{"a reason too long", path, h.AdminToken, `{"reason":"` + strings.Repeat("r", api.MaxCordonReasonBytes+1) + `"}`, http.StatusBadRequest, api.CodeInvalidArgument},
		{"an overlong GPU id", "/v1/workers/w1/devices/" + strings.Repeat("G", api.MaxDeviceUUIDBytes+1) + "/drain", h.AdminToken, `{}`, http.StatusBadRequest, api.CodeInvalidArgument},
		{"no credential", path, "", `{}`, http.StatusUnauthorized, api.CodeUnauthenticated},
		{"a read client", path, mintClient(t, h, "drain-read", auth.RoleRead), `{}`, http.StatusForbidden, api.CodeForbidden},
	} {
		r := call(t, h.URL, "POST", c.path, c.token, []byte(c.body), nil)
		if r.status != c.status || r.body.Error == nil || r.body.Error.Code != c.code {
			t.Errorf("%s: %d %s, want %d %s", c.name, r.status, r.raw, c.status, c.code)
		}
	}
	if w, _ := admin.Worker(ctx, "w1"); slices.ContainsFunc(w.Devices, func(d api.Device) bool { return d.Cordoned }) {
		t.Fatalf("a refused drain cordoned: %+v", w.Devices)
	}
	if beat, err := worker.Heartbeat(ctx, api.HeartbeatRequest{RunningTaskIDs: []string{first.ID}}); err != nil || len(beat.CancelTaskIDs) != 0 {
		t.Fatalf("a refused drain stopped the task: %+v %v", beat, err)
	}

	w, err := admin.DrainGPU(ctx, "w1", gpu, "reset")
	if err != nil {
		t.Fatal(err)
	}
	if i := slices.IndexFunc(w.Devices, func(d api.Device) bool { return d.UUID == gpu }); i < 0 || !w.Devices[i].Cordoned || w.Devices[i].CordonReason != "reset" {
		t.Fatalf("the drained GPU's record: %+v", w.Devices)
	}
	beat, err := worker.Heartbeat(ctx, api.HeartbeatRequest{RunningTaskIDs: []string{first.ID}})
	if err != nil || !slices.Contains(beat.CancelTaskIDs, first.ID) {
		t.Fatalf("the heartbeat answer after the drain: %+v %v, want %s to stop", beat, err, first.ID)
	}
	task, err := worker.Fail(ctx, first.ID, api.FailRequest{AttemptID: first.AttemptID, Reason: "stopped"})
	if err != nil {
		t.Fatal(err)
	}
	last := task.Attempts[len(task.Attempts)-1]
	if task.State != api.TaskPending || last.State != api.AttemptPreempted || !strings.Contains(last.Reason, "drained by an admin: reset") {
		t.Fatalf("after the drained task stopped: task %s, attempt %s %q", task.State, last.State, last.Reason)
	}
	again, err := worker.Acquire(ctx, api.AcquireRequest{WaitSeconds: 1})
	if err != nil || again.Task == nil || again.Task.ID != first.ID || again.Task.Devices[0] == gpu {
		t.Fatalf("the retry: %+v %v, want %s on the other GPU", again, err, first.ID)
	}
	audit, err := admin.Audit(ctx, client.AuditQuery{Kinds: []string{"gpu.drained"}})
	if err != nil || len(audit.Events) != 1 || audit.Events[0].Subject != gpu || audit.Events[0].Actor == "" {
		t.Fatalf("audit: %+v %v", audit, err)
	}
}
