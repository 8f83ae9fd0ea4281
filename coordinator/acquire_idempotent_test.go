package coordinator_test

import (
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// An acquire retried under its request id (its answer lost to a timeout)
// gets the first answer again and leaves the other pending task alone; a
// new request id gets that one.
func TestAcquireRetriedUnderItsRequestIDGetsTheSameTask(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	ctx := t.Context()
	admin := h.Client(t, h.AdminToken)
	worker := h.Worker(t, "w1")
	for range 2 {
		if _, err := admin.SubmitJob(ctx, api.JobSpec{Executor: "exec", Config: []byte(`{"command":"true"}`)}); err != nil {
			t.Fatal(err)
		}
	}
	acquire := func(id string) api.Assignment {
		t.Helper()
		resp, err := worker.Acquire(ctx, api.AcquireRequest{RequestID: id})
		if err != nil || resp.Task == nil {
			t.Fatalf("acquire %s: %+v %v", id, resp, err)
		}
		return *resp.Task
	}
	first := acquire("req-1")
	again := acquire("req-1")
	if again.AttemptID != first.AttemptID || again.ID != first.ID {
		t.Fatalf("the retry got %s/%s, the first call %s/%s", again.ID, again.AttemptID, first.ID, first.AttemptID)
	}
	jobs, err := admin.Jobs(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	assigned := 0
	for _, j := range jobs {
		for _, task := range j.Tasks {
			if task.State == api.TaskAssigned {
				assigned++
			}
		}
	}
	if assigned != 1 {
		t.Fatalf("%d tasks assigned after one acquire and its retry", assigned)
	}
	if other := acquire("req-2"); other.ID == first.ID {
		t.Fatalf("a new request id got the same task %s", other.ID)
	}
	long := make([]byte, api.MaxKeyBytes+1)
	for i := range long {
		long[i] = 'r'
	}
	if _, err := worker.Acquire(ctx, api.AcquireRequest{RequestID: string(long)}); err == nil {
		t.Fatal("an over-long request id was taken")
	}
}
