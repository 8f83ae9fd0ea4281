package coordinator_test

import (
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// A job's own task limits (resources.memory_mib, resources.cpus) reach
// the worker with each assignment, as the job recorded them: the agent
// turns them into the task's cgroup limits (agent/runner, sandbox.go).
func TestTaskLimitsTravelWithTheAssignment(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	ctx := t.Context()
	admin := h.Client(t, h.AdminToken)
	reg, err := h.Client(t, h.JoinToken).Register(ctx, api.RegisterRequest{WorkerID: "cpu-1", Capabilities: []string{"*"}, Executors: []string{"exec"}})
	if err != nil {
		t.Fatal(err)
	}
	want := api.Resources{MemoryMiB: 1536, CPUs: 2.5}
	job, err := admin.SubmitJob(ctx, api.JobSpec{Executor: "exec", Config: []byte(`{"command":"true"}`), Resources: &want})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := admin.Job(ctx, job.ID); err != nil || got.Resources == nil || *got.Resources != want {
		t.Fatalf("job resources %+v (%v), want %+v", got.Resources, err, want)
	}
	acq, err := h.Client(t, reg.WorkerToken).Acquire(ctx, api.AcquireRequest{WaitSeconds: 1})
	if err != nil || acq.Task == nil {
		t.Fatalf("acquire: %+v %v", acq, err)
	}
	if acq.Task.Resources == nil || *acq.Task.Resources != want {
		t.Fatalf("assignment resources %+v, want %+v", acq.Task.Resources, want)
	}
}
