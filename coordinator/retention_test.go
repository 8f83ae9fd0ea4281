package coordinator_test

import (
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator"
	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// runToEnd submits a job and has worker run it to exit 0.
func runToEnd(t *testing.T, admin, worker *client.Client, name string) string {
	t.Helper()
	ctx := t.Context()
	job, err := admin.SubmitJob(ctx, api.JobSpec{Name: name, Executor: "exec", Config: []byte(`{"command":"true"}`), IdempotencyKey: name})
	if err != nil {
		t.Fatal(err)
	}
	acq, err := worker.Acquire(ctx, api.AcquireRequest{WaitSeconds: 5})
	if err != nil || acq.Task == nil {
		t.Fatalf("acquire: %+v %v", acq, err)
	}
	if err := worker.Start(ctx, acq.Task.ID, acq.Task.AttemptID); err != nil {
		t.Fatal(err)
	}
	if err := worker.AppendLogs(ctx, acq.Task.ID, api.LogsRequest{AttemptID: acq.Task.AttemptID, Stream: "stdout", Seq: 1, Data: "out\n"}); err != nil {
		t.Fatal(err)
	}
	if _, err := worker.Finish(ctx, acq.Task.ID, api.FinishRequest{AttemptID: acq.Task.AttemptID, SubmissionID: "fin", ExitCode: 0}); err != nil {
		t.Fatal(err)
	}
	return job.ID
}

// Finished jobs are removed once past the retention threshold, by the
// leader on its own and on an admin's request, on every node alike; after
// that the job answers 404, and its idempotency key is free. A job still
// pending is never removed.
func TestRetentionRemovesFinishedJobs(t *testing.T) {
	c := coordinatortest.StartCluster(t, 3, coordinatortest.Options{Tweak: func(cfg *coordinator.Config) {
		// The leader collects every 200 ms, jobs finished 2 s ago.
		cfg.Retention = coordinator.Retention{Threshold: 2 * time.Second, Interval: 200 * time.Millisecond}
	}})
	ctx := t.Context()
	admin := c.Client(c.AdminToken)
	reg, err := c.Client(c.JoinToken).Register(ctx, api.RegisterRequest{WorkerID: "w", Capabilities: []string{"*"}, Executors: []string{"exec"}})
	if err != nil {
		t.Fatal(err)
	}
	worker := c.Client(reg.WorkerToken)

	auto := runToEnd(t, admin, worker, "auto")
	pending, err := admin.SubmitJob(ctx, api.JobSpec{Executor: "other", Config: []byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	coordinatortest.WaitFor(t, 30*time.Second, "the leader to remove the finished job past the threshold", func() bool {
		_, err := admin.Job(ctx, auto)
		return client.IsCode(err, api.CodeNotFound)
	})

	// On request, with a threshold of its own: a job just finished.
	forced := runToEnd(t, admin, worker, "forced")
	zero := time.Duration(0)
	n, err := admin.CollectGarbage(ctx, &zero)
	if err != nil || n != 1 {
		t.Fatalf("gc: removed %d, %v; want the one finished job", n, err)
	}
	if _, err := admin.Job(ctx, forced); !client.IsCode(err, api.CodeNotFound) {
		t.Fatalf("collected job: %v, want not_found", err)
	}
	if j, err := admin.Job(ctx, pending.ID); err != nil || j.State != api.TaskPending {
		t.Fatalf("the pending job: %+v %v", j, err)
	}
	// The key of a collected job names a new one.
	again, err := admin.SubmitJob(ctx, api.JobSpec{Name: "forced", Executor: "exec", Config: []byte(`{"command":"true"}`), IdempotencyKey: "forced"})
	if err != nil || again.ID == forced {
		t.Fatalf("resubmit under a collected key: %+v %v", again, err)
	}
	c.Converged(30 * time.Second)

	// Only an admin may collect, and the age is bounded.
	for _, bad := range []int64{-1, api.MaxGCAgeSeconds + 1} {
		secs := time.Duration(bad) * time.Second
		if _, err := admin.CollectGarbage(ctx, &secs); !client.IsCode(err, api.CodeInvalidArgument) {
			t.Errorf("older_than_seconds %d: %v, want invalid_argument", bad, err)
		}
	}
	if _, err := worker.CollectGarbage(ctx, nil); !client.IsCode(err, api.CodeForbidden) {
		t.Errorf("a worker collecting: %v, want forbidden", err)
	}
}
