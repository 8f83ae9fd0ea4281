package coordinator_test

import (
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// A finish or a fail the state accepted drops the attempt's lease timer
// on the leader at once, rather than when the lease would have lapsed.
func TestAnEndedAttemptHoldsNoLeaseTimer(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	ctx := t.Context()
	admin := h.Client(t, h.AdminToken)
	worker := h.Worker(t, "w1")
	for _, end := range []string{"finish", "fail"} {
		if _, err := admin.SubmitJob(ctx, api.JobSpec{Executor: "exec", Config: []byte(`{"command":"true"}`), MaxAttempts: 1, IdempotencyKey: end}); err != nil {
			t.Fatal(err)
		}
		acq, err := worker.Acquire(ctx, api.AcquireRequest{WaitSeconds: 5})
		if err != nil || acq.Task == nil {
			t.Fatalf("%s: acquire: %+v %v", end, acq, err)
		}
		id, attempt := acq.Task.ID, acq.Task.AttemptID
		if err := worker.Start(ctx, id, attempt); err != nil {
			t.Fatal(err)
		}
		if _, ok := h.Server.LeaseDeadline(attempt); !ok { // armed by the acquire that answered
			t.Fatalf("%s: no lease armed for the acquired attempt", end)
		}
		if end == "finish" {
			_, err = worker.Finish(ctx, id, api.FinishRequest{AttemptID: attempt, SubmissionID: "s-" + end})
		} else {
			_, err = worker.Fail(ctx, id, api.FailRequest{AttemptID: attempt, Reason: "no"})
		}
		if err != nil {
			t.Fatalf("%s: %v", end, err)
		}
		if d, ok := h.Server.LeaseDeadline(attempt); ok {
			t.Fatalf("after the %s the leader still holds a lease until %v", end, d)
		}
	}
}
