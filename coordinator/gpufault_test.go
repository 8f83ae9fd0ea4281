package coordinator_test

import (
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// A worker reports that a GPU failed under its task: the attempt is
// lost, not failed, the task is pending again at once with its one
// attempt unspent, and the next acquire places it on the other GPU. A
// report naming a GPU the attempt lacks, or with permanent, is refused.
func TestGPUFaultReplacesTheTaskAtOnce(t *testing.T) {
	admin, worker, job, first := oneGPUTaskAssigned(t) // preflightreport_test.go
	ctx := t.Context()
	if err := worker.Start(ctx, first.ID, first.AttemptID); err != nil {
		t.Fatal(err)
	}
	for name, req := range map[string]api.FailRequest{
		"a GPU it lacks":     {AttemptID: first.AttemptID, Reason: "XID 79", GPUFault: "GPU-z"},
		"with permanent":     {AttemptID: first.AttemptID, Reason: "XID 79", GPUFault: first.Devices[0], Permanent: true},
		"an overlong GPU id": {AttemptID: first.AttemptID, Reason: "XID 79", GPUFault: strings.Repeat("G", api.MaxDeviceUUIDBytes+1)},
	} {
		if _, err := worker.Fail(ctx, first.ID, req); !client.IsCode(err, api.CodeInvalidArgument) {
			t.Errorf("%s: %v, want invalid_argument", name, err)
		}
	}
	task, err := worker.Fail(ctx, first.ID, api.FailRequest{AttemptID: first.AttemptID, Reason: "XID 79: fell off the bus", GPUFault: first.Devices[0]})
	if err != nil {
		t.Fatal(err)
	}
	last := task.Attempts[len(task.Attempts)-1]
	if task.State != api.TaskPending || last.State != api.AttemptLost || !strings.Contains(last.Reason, first.Devices[0]) {
		t.Fatalf("after the GPU fault: task %s, attempt %s %q", task.State, last.State, last.Reason)
	}
	again, err := worker.Acquire(ctx, api.AcquireRequest{WaitSeconds: 1})
	if err != nil || again.Task == nil || again.Task.Devices[0] == first.Devices[0] {
		t.Fatalf("the retry: %+v %v, want it on the other GPU", again, err)
	}
	w, err := admin.Worker(ctx, "w1")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range w.Devices {
		if d.UUID == first.Devices[0] && d.Healthy {
			t.Fatalf("the failed GPU is shown healthy: %+v", d)
		}
	}
	if j, _ := admin.Job(ctx, job.ID); j.State == api.TaskFailed {
		t.Fatal("the job failed although its one attempt was lost to the GPU")
	}
}
