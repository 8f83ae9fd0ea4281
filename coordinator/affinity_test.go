package coordinator_test

import (
	"encoding/json"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// A worker that another live worker beats on a job's soft affinity gets
// nothing from an acquire that does not wait, and the task from one that
// does: its long poll is woken when the task's affinity wait ends.
func TestSoftAffinityOverHTTP(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	ctx := t.Context()
	admin := h.Client(t, h.AdminToken)
	other, _ := fleetWorker(t, h, "other")
	fleetWorker(t, h, "preferred")
	rules, err := json.Marshal([]api.AffinityRule{{Worker: "preferred", Weight: 80}})
	if err != nil {
		t.Fatal(err)
	}
	job, err := admin.SubmitJob(ctx, api.JobSpec{Executor: "exec", Config: []byte(`{"command":"true"}`), Affinity: rules})
	if err != nil {
		t.Fatal(err)
	}
	if acq, err := other.Acquire(ctx, api.AcquireRequest{}); err != nil || acq.Task != nil {
		t.Fatalf("the worker the job does not prefer got it at once: %+v %v", acq, err)
	}
	acq, err := other.Acquire(ctx, api.AcquireRequest{WaitSeconds: api.MaxWaitSeconds})
	if err != nil || acq.Task == nil || acq.Task.JobID != job.ID {
		t.Fatalf("after the affinity wait: %+v %v", acq, err)
	}
}
