package coordinator_test

import (
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

func TestTaskLifecycleOverHTTP(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	ctx := t.Context()
	admin := h.Client(t, h.AdminToken)
	join := h.Client(t, h.JoinToken)

	reg, err := join.Register(ctx, api.RegisterRequest{WorkerID: "gpu-1", Capabilities: []string{"*"}, Executors: []string{"exec"},
		Devices: []api.Device{{Index: 0, UUID: "GPU-a", Name: "H100", Healthy: true}, {Index: 1, UUID: "GPU-b", Name: "H100", Healthy: true}}})
	if err != nil {
		t.Fatal(err)
	}
	if reg.WorkerToken == "" || reg.WorkerID != "gpu-1" {
		t.Fatalf("register answer %+v", reg)
	}
	again, err := join.Register(ctx, api.RegisterRequest{WorkerID: "gpu-1"})
	if err != nil || again.WorkerToken != "" {
		t.Fatalf("re-register handed out a credential or failed: %+v %v", again, err)
	}
	worker := h.Client(t, reg.WorkerToken)

	job, err := admin.SubmitJob(ctx, api.JobSpec{Executor: "exec", Config: []byte(`{"command":"nvidia-smi"}`), Resources: &api.Resources{GPUs: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if job.CreatedBy != "admin" || job.State != api.TaskPending || len(job.Tasks) != 1 {
		t.Fatalf("job %+v", job)
	}
	acq, err := worker.Acquire(ctx, api.AcquireRequest{WaitSeconds: 1})
	if err != nil || acq.Task == nil {
		t.Fatalf("acquire: %+v %v", acq, err)
	}
	if len(acq.Task.Devices) != 1 || acq.Task.Devices[0] != "GPU-a" {
		t.Fatalf("devices %v", acq.Task.Devices)
	}
	if err := worker.Start(ctx, acq.Task.ID, acq.Task.AttemptID); err != nil {
		t.Fatal(err)
	}
	if err := worker.AppendLogs(ctx, acq.Task.ID, api.LogsRequest{AttemptID: acq.Task.AttemptID, Stream: "stdout", Seq: 1, Data: "hello\n"}); err != nil {
		t.Fatal(err)
	}
	fin := api.FinishRequest{AttemptID: acq.Task.AttemptID, SubmissionID: "s1", ExitCode: 0}
	task, err := worker.Finish(ctx, acq.Task.ID, fin)
	if err != nil || task.State != api.TaskSucceeded || task.ExecutedBy != "gpu-1" || task.SubmittedBy != "gpu-1" {
		t.Fatalf("finish: %+v %v", task, err)
	}
	replay, err := worker.Finish(ctx, acq.Task.ID, fin)
	if err != nil || replay.State != api.TaskSucceeded {
		t.Fatalf("replayed finish: %+v %v", replay, err)
	}
	fin.ExitCode = 1
	if _, err := worker.Finish(ctx, acq.Task.ID, fin); !client.IsCode(err, api.CodeConflict) {
		t.Fatalf("finish with same submission id and other body: %v, want conflict", err)
	}
	got, err := admin.Job(ctx, job.ID)
	if err != nil || got.State != api.TaskSucceeded {
		t.Fatalf("job after finish: %+v %v", got, err)
	}
	var lines []string
	if err := admin.Logs(ctx, job.ID, true, func(e api.LogEntry) error { lines = append(lines, e.Data); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(lines) != 1 || lines[0] != "hello\n" {
		t.Fatalf("logs %q", lines)
	}
}
