package coordinator_test

import (
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// Issue 27: a worker that falls silent (an agent frozen with SIGSTOP)
// loses its task's attempt when the lease lapses, and the retry is not
// handed back to it while it has not been heard from since: not by the
// long poll it had in flight (which ends at once, with nothing), not by a
// later acquire without a heartbeat between. Another worker gets the
// retry; and once the first worker heartbeats again, it may take a retry
// lost by someone else, or its own.
func TestLostAttemptIsNotRetriedOnItsSilentWorker(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	ctx := t.Context()
	admin := h.Client(t, h.AdminToken)
	_, frozen := enroll(t, h, "frozen")
	_, rescuer := enroll(t, h, "rescuer")
	spec := execJob()
	spec.LeaseSeconds, spec.MaxAttempts = 1, 5
	job, err := admin.SubmitJob(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	attempts := func() []api.Attempt {
		j, err := admin.Job(ctx, job.ID)
		if err != nil {
			t.Fatal(err)
		}
		return j.Tasks[0].Attempts
	}
	lostOn := func(n int, worker string) {
		t.Helper()
		coordinatortest.WaitFor(t, 15*time.Second, "attempt "+string(rune('0'+n))+" to be lost on "+worker, func() bool {
			as := attempts()
			return len(as) >= n && as[n-1].State == api.AttemptLost
		})
		if a := attempts()[n-1]; a.WorkerID != worker {
			t.Fatalf("attempt %d lost on %s, want %s", n, a.WorkerID, worker)
		}
	}
	if _, err := frozen.Heartbeat(ctx, api.HeartbeatRequest{}); err != nil {
		t.Fatal(err)
	}
	held := acquireOne(t, frozen)
	if err := frozen.Start(ctx, held.ID, held.AttemptID); err != nil {
		t.Fatal(err)
	}

	// The agent has a long poll open when it freezes: heartbeats keep
	// its lease until the poll is in, then stop.
	type answer struct {
		resp api.AcquireResponse
		err  error
	}
	inFlight := make(chan answer, 1)
	go func() {
		resp, err := frozen.Acquire(ctx, api.AcquireRequest{WaitSeconds: 25})
		inFlight <- answer{resp, err}
	}()
	coordinatortest.WaitFor(t, 10*time.Second, "the frozen worker's long poll to be open", func() bool {
		if _, err := frozen.Heartbeat(ctx, api.HeartbeatRequest{RunningTaskIDs: []string{held.ID}}); err != nil {
			t.Fatal(err)
		}
		return openLongPolls(t, h) == 1
	})
	lostOn(1, "frozen")

	// The poll in flight at the loss ends with nothing, well before its
	// 25 s wait, and the task stays pending.
	select {
	case a := <-inFlight:
		if a.err != nil || a.resp.Task != nil {
			t.Fatalf("the long poll in flight at the loss got %+v %v, want nothing", a.resp.Task, a.err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the long poll in flight at the loss kept waiting for a task it may not have")
	}
	// A new acquire, no heartbeat since the loss: nothing either.
	if a, err := frozen.Acquire(ctx, api.AcquireRequest{}); err != nil || a.Task != nil {
		t.Fatalf("the silent worker's acquire got %+v %v, want nothing", a.Task, err)
	}
	if as := attempts(); len(as) != 1 {
		t.Fatalf("attempts %+v, want the lost one only", as)
	}

	// Another worker gets the retry; then it too falls silent.
	retry := acquireOne(t, rescuer)
	if retry.ID != held.ID || retry.Attempt != 2 {
		t.Fatalf("the rescuer got %+v, want attempt 2 of %s", retry, held.ID)
	}
	lostOn(2, "rescuer")
	if a, err := rescuer.Acquire(ctx, api.AcquireRequest{}); err != nil || a.Task != nil {
		t.Fatalf("the silent rescuer's acquire got %+v %v, want nothing", a.Task, err)
	}

	// The first worker is heard from again: the task, lost on it too
	// but before this heartbeat, is its to take.
	if _, err := frozen.Heartbeat(ctx, api.HeartbeatRequest{}); err != nil {
		t.Fatal(err)
	}
	again := acquireOne(t, frozen)
	if again.ID != held.ID || again.Attempt != 3 {
		t.Fatalf("the worker heard from again got %+v, want attempt 3 of %s", again, held.ID)
	}
	if _, err := frozen.Finish(ctx, again.ID, api.FinishRequest{AttemptID: again.AttemptID}); err != nil {
		t.Fatal(err)
	}
	if j, err := admin.Job(ctx, job.ID); err != nil || j.State != api.TaskSucceeded {
		t.Fatalf("job %+v %v, want succeeded", j, err)
	}
}
