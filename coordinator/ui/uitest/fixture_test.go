package uitest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator"
	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// xss is a payload that would run script if the page parsed data as HTML.
const xss = `<img src=x onerror=alert(1)>`

// failReason is what the failing job's worker says.
const failReason = `command "nvidia-smi" not found on this node`

// fillers are old jobs that push the newest ones past the first page of
// 25, so that paging has somewhere to go.
const fillers = 24

// fleet is a coordinator with two workers (one draining) and jobs in
// every state, driven through the worker API as an agent would.
type fleet struct {
	h          *coordinatortest.Harness
	readToken  string
	worker     *client.Client
	succeeded  string
	failed     string
	xssJob     string
	running    string
	runningRef api.Task // the running task's id and attempt, to log more
	pending    string
	oldest     string
}

// devices are four fake H100s: two healthy, one that fell off the bus and
// one in its hold-down window after a fault.
func devices() []api.Device {
	health := []struct{ state, reason string }{
		{api.HealthHealthy, ""},
		{api.HealthHealthy, ""},
		{api.HealthUnhealthy, "XID 79: the GPU has fallen off the bus"},
		{api.HealthRecovering, "XID 94: contained ECC error, in its hold-down window"},
	}
	out := make([]api.Device, len(health))
	for i, h := range health {
		out[i] = api.Device{Index: i, UUID: fmt.Sprintf("GPU-6f1e0a52-%04d-4c6e-9d1b-a1b2c3d4e5f%d", i, i),
			Name: "NVIDIA H100 80GB HBM3", MemoryMiB: 81559, DriverVersion: "550.54.15", CUDAVersion: "12.4", ComputeCapability: "9.0",
			Healthy: h.state == api.HealthHealthy, Health: h.state, HealthReason: h.reason}
	}
	return out
}

func newFleet(t *testing.T) *fleet {
	t.Helper()
	h := coordinatortest.Start(t, coordinatortest.Options{Tweak: func(cfg *coordinator.Config) {
		// Workers stay ready for the whole test without heartbeating.
		cfg.HeartbeatInterval = time.Minute
	}})
	ctx := t.Context()
	admin := h.Client(t, h.AdminToken)
	tok, err := admin.CreateToken(ctx, api.CreateTokenRequest{Kind: api.TokenKindClient, Name: "dashboard-reader", Roles: []string{"read"}})
	if err != nil {
		t.Fatal(err)
	}
	f := &fleet{h: h, readToken: tok.Token}

	join := h.Client(t, h.JoinToken)
	reg, err := join.Register(ctx, api.RegisterRequest{WorkerID: "gpu-node-1", Capabilities: []string{"*"}, Executors: []string{"exec"},
		Labels: map[string]string{"zone": "eu-west-1a"}, Devices: devices()})
	if err != nil {
		t.Fatal(err)
	}
	f.worker = h.Client(t, reg.WorkerToken)
	if _, err := f.worker.Heartbeat(ctx, api.HeartbeatRequest{Devices: devices(), Executors: []string{"exec"}}); err != nil {
		t.Fatal(err)
	}
	reg2, err := join.Register(ctx, api.RegisterRequest{WorkerID: "gpu-node-2", Capabilities: []string{"*"}, Executors: []string{"exec"}, Devices: devices()[:2]})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Client(t, reg2.WorkerToken).Heartbeat(ctx, api.HeartbeatRequest{}); err != nil {
		t.Fatal(err)
	}
	deadline := 3600
	if _, err := admin.DrainWorker(ctx, "gpu-node-2", &deadline); err != nil {
		t.Fatal(err)
	}
	// A revoked worker: its GPUs count as no healthy GPU. Its id, and
	// the name of a token refused an admin route, are as long as ids and
	// names may be: the audit table must still fit its card.
	revoked := "gpu-node-3-" + strings.Repeat("x", 52)
	if _, err := join.Register(ctx, api.RegisterRequest{WorkerID: revoked, Capabilities: []string{"*"}, Executors: []string{"exec"}, Devices: devices()[:2]}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.RevokeWorker(ctx, revoked); err != nil {
		t.Fatal(err)
	}
	long, err := admin.CreateToken(ctx, api.CreateTokenRequest{Kind: api.TokenKindClient, Name: "reader-" + strings.Repeat("y", 56), Roles: []string{"read"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Client(t, long.Token).RemoveGroupMember(ctx, "some-group", api.GroupMember{Kind: "worker", ID: revoked}); !client.IsCode(err, api.CodeForbidden) {
		t.Fatalf("a read token removes a group member: %v", err)
	}

	for i := range fillers {
		j, err := admin.SubmitJob(ctx, api.JobSpec{Name: fmt.Sprintf("sweep-%02d", i), Executor: "sweep", Config: []byte(`{}`)})
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			f.oldest = j.ID
		}
	}
	f.succeeded = f.run(t, admin, api.JobSpec{Name: "train-resnet50", Executor: "exec", Resources: &api.Resources{GPUs: 1},
		Config: []byte(`{"command":"python","args":["train.py"]}`)},
		[]api.LogsRequest{{Stream: "stdout", Data: "epoch 1/2 loss 0.713\n"}, {Stream: "stdout", Data: "epoch 2/2 loss 0.421\n"}},
		func(task api.Task) error {
			_, err := f.worker.Finish(ctx, task.ID, api.FinishRequest{AttemptID: task.AttemptID, ExitCode: 0, Output: []byte(`{"accuracy":0.93}`)})
			return err
		})
	f.failed = f.run(t, admin, api.JobSpec{Name: "gpu-inventory", Executor: "exec", Config: []byte(`{"command":"nvidia-smi","args":["-L"]}`)},
		[]api.LogsRequest{{Stream: "stderr", Data: "exec: nvidia-smi: executable file not found in $PATH\n"}},
		func(task api.Task) error {
			_, err := f.worker.Fail(ctx, task.ID, api.FailRequest{AttemptID: task.AttemptID, Reason: failReason, Permanent: true})
			return err
		})
	out, err := json.Marshal(map[string]string{"message": xss})
	if err != nil {
		t.Fatal(err)
	}
	f.xssJob = f.run(t, admin, api.JobSpec{Name: xss, Executor: "exec", Config: []byte(`{"command":"echo"}`)},
		[]api.LogsRequest{{Stream: "stdout", Data: xss + "\n"}},
		func(task api.Task) error {
			_, err := f.worker.Finish(ctx, task.ID, api.FinishRequest{AttemptID: task.AttemptID, ExitCode: 0, Output: out})
			return err
		})
	f.running = f.run(t, admin, api.JobSpec{Name: "finetune-llama", Executor: "exec", Resources: &api.Resources{GPUs: 1}, LeaseSeconds: 600,
		Config: []byte(`{"command":"python","args":["finetune.py"]}`)},
		[]api.LogsRequest{{Stream: "stdout", Data: "step 1 loss 2.31\n"}},
		func(task api.Task) error {
			f.runningRef = task
			return nil
		})
	pending, err := admin.SubmitJob(ctx, api.JobSpec{Name: "needs-a100", Executor: "exec", Resources: &api.Resources{GPUs: 1, GPUModel: "A100"}, Config: []byte(`{"command":"true"}`)})
	if err != nil {
		t.Fatal(err)
	}
	f.pending = pending.ID
	return f
}

// run submits a job, has the worker acquire and start its task and write
// logs, then hands the task to end (which may leave it running).
func (f *fleet) run(t *testing.T, admin *client.Client, spec api.JobSpec, logs []api.LogsRequest, end func(api.Task) error) string {
	t.Helper()
	ctx := t.Context()
	job, err := admin.SubmitJob(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	acq, err := f.worker.Acquire(ctx, api.AcquireRequest{WaitSeconds: 5})
	if err != nil || acq.Task == nil || acq.Task.JobID != job.ID {
		t.Fatalf("acquire for %s: %+v %v", job.ID, acq, err)
	}
	task := *acq.Task
	if err := f.worker.Start(ctx, task.ID, task.AttemptID); err != nil {
		t.Fatal(err)
	}
	for i, l := range logs {
		l.AttemptID, l.Seq = task.AttemptID, int64(i+1)
		if err := f.worker.AppendLogs(ctx, task.ID, l); err != nil {
			t.Fatal(err)
		}
	}
	if err := end(api.Task{ID: task.ID, AttemptID: task.AttemptID}); err != nil {
		t.Fatal(err)
	}
	return job.ID
}

// logMore appends a line to the running task's output.
func (f *fleet) logMore(t *testing.T, seq int64, data string) {
	t.Helper()
	err := f.worker.AppendLogs(t.Context(), f.runningRef.ID, api.LogsRequest{AttemptID: f.runningRef.AttemptID, Stream: "stdout", Seq: seq, Data: data})
	if err != nil {
		t.Fatal(err)
	}
}
