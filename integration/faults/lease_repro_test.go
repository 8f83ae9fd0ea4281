package faults

import (
	"context"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator"
	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// TestCommittedAssignmentWithoutAnswerLapses pins down, without timing
// luck, what the campaign found with seed 204 (a ghost attempt of a
// crashed worker stayed assigned for good): an assignment that commits
// after the acquire that proposed it has gone must still get a lease.
//
// Before 5f0aa67 the scheduler armed an attempt's lease only once its
// proposal returned (sched.Scheduler.handOut). When the acquire's request
// ended first (the worker crashed or timed out, so its context was
// cancelled while the proposal waited for its commit), the entry still
// committed but no lease was armed on that leader; heartbeats renew only
// the tasks a worker reports, and a worker that never got the answer
// reports nothing, so the task stayed assigned until another node took
// office and re-armed every lease from the state.
//
// The test commits the assignment as the scheduler proposes it, with no
// answer and no handOut, and waits for the lease to lapse.
func TestCommittedAssignmentWithoutAnswerLapses(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{Tweak: func(c *coordinator.Config) {
		c.HeartbeatInterval = heartbeatEvery
		c.LeaseGrace = 500 * time.Millisecond
	}})
	ctx := t.Context()
	join := h.Client(t, h.JoinToken)
	if _, err := join.Register(ctx, api.RegisterRequest{WorkerID: "gone", Capabilities: []string{"*"}, Executors: []string{simExecutor}}); err != nil {
		t.Fatal(err)
	}
	admin := h.Client(t, h.AdminToken)
	job, err := admin.SubmitJob(ctx, api.JobSpec{Executor: simExecutor, LeaseSeconds: 1, MaxAttempts: 2})
	if err != nil {
		t.Fatal(err)
	}
	task := job.Tasks[0].ID
	// What sched.Scheduler.tryOnce proposes; its caller's context is gone
	// by the time the entry commits, so handOut never runs.
	res, err := h.Server.Propose(context.Background(), command.AssignTask{TaskID: task, WorkerID: "gone", AttemptID: "a-unanswered", Now: time.Now().UTC(), RequestID: "r-unanswered"})
	if err != nil || res.Err() != nil {
		t.Fatalf("assign: %v %v", err, res.Err())
	}
	// Lease 1 s, checked every 50 ms: lost well within 5 s.
	deadline := time.Now().Add(5 * time.Second)
	for {
		j, err := admin.Job(ctx, job.ID)
		if err != nil {
			t.Fatal(err)
		}
		if j.Tasks[0].State == api.TaskPending && len(j.Tasks[0].Attempts) == 1 && j.Tasks[0].Attempts[0].State == api.AttemptLost {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s is still %s 5 s after its 1 s lease began: an assignment committed without its acquire's answer got no lease; attempts: %+v", task, j.Tasks[0].State, j.Tasks[0].Attempts)
		}
		<-time.After(50 * time.Millisecond)
	}
}
