package coordinator_test

import (
	"context"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// The gang protocol over HTTP, as PROTOCOL.md's additions say: one
// acquire places every member (each answer carries gang {size, rank}),
// the other worker gets its members from its own acquire once, a
// rendezvous waits for the whole gang ({ready: false} when its wait
// ends first) and lists it by rank; one member lost ends the others'
// attempts, and the gang is placed again whole.
func TestGangOverHTTP(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	ctx := t.Context()
	admin := h.Client(t, h.AdminToken)
	w1, _ := fleetWorker(t, h, "gang-a")
	w2, _ := fleetWorker(t, h, "gang-b")
	for _, w := range []*client.Client{w1, w2} {
		if _, err := w.Heartbeat(ctx, api.HeartbeatRequest{MaxTasks: 2}); err != nil {
			t.Fatal(err)
		}
	}
	job, err := admin.SubmitJob(ctx, api.JobSpec{Executor: "exec", Config: []byte(`{"command":"true"}`), Count: 4, Gang: true, MaxAttempts: 2})
	if err != nil {
		t.Fatal(err)
	}
	first, err := w1.Acquire(ctx, api.AcquireRequest{MaxTasks: 2, RequestID: "a-1"})
	if err != nil || len(first.Tasks) != 2 {
		t.Fatalf("the placing acquire: %+v %v, want its two slots filled", first, err)
	}
	for i, a := range first.Tasks {
		if a.Gang == nil || a.Gang.Size != 4 || a.Gang.Rank != i {
			t.Fatalf("member %d: gang %+v, want size 4 rank %d", i, a.Gang, i)
		}
	}
	second, err := w2.Acquire(ctx, api.AcquireRequest{MaxTasks: 2, RequestID: "b-1"})
	if err != nil || len(second.Tasks) != 2 || second.Tasks[0].Gang.Rank != 2 || second.Tasks[1].Gang.Rank != 3 {
		t.Fatalf("the other worker's acquire: %+v %v, want ranks 2 and 3", second, err)
	}
	if again, err := w2.Acquire(ctx, api.AcquireRequest{MaxTasks: 2, RequestID: "b-2"}); err != nil || len(again.Tasks) != 0 {
		t.Fatalf("a second acquire re-delivered at once: %+v %v", again, err)
	}
	if retry, err := w2.Acquire(ctx, api.AcquireRequest{MaxTasks: 2, RequestID: "b-1"}); err != nil || len(retry.Tasks) != 2 {
		t.Fatalf("the same acquire retried: %+v %v, want its members again", retry, err)
	}

	members := append(append([]api.Assignment{}, first.Tasks...), second.Tasks...)
	clients := []*client.Client{w1, w1, w2, w2}
	for i, a := range members {
		if err := clients[i].Start(ctx, a.ID, a.AttemptID); err != nil {
			t.Fatal(err)
		}
	}
	// Three join; the third's wait ends before the fourth comes.
	for i := range 3 {
		port := 0
		if i == 0 {
			port = 29500
		}
		r, err := clients[i].Rendezvous(ctx, members[i].ID, api.RendezvousRequest{AttemptID: members[i].AttemptID, Address: "10.0.0.1", Port: port, WaitSeconds: 1})
		if err != nil || r.Ready {
			t.Fatalf("rank %d joining before the gang is whole: %+v %v", i, r, err)
		}
	}
	waiting := make(chan api.RendezvousResponse, 1)
	go func() {
		r, err := w1.Rendezvous(context.WithoutCancel(ctx), members[0].ID, api.RendezvousRequest{AttemptID: members[0].AttemptID, Address: "10.0.0.1", Port: 29500})
		if err != nil {
			t.Error(err)
		}
		waiting <- r
	}()
	last, err := w2.Rendezvous(ctx, members[3].ID, api.RendezvousRequest{AttemptID: members[3].AttemptID, Address: "node-b"})
	if err != nil || !last.Ready || len(last.Peers) != 4 {
		t.Fatalf("the last member: %+v %v", last, err)
	}
	for i, p := range last.Peers {
		if p.Rank != i || p.TaskID != members[i].ID {
			t.Fatalf("peer %d: %+v", i, p)
		}
	}
	if p := last.Peers[0]; p.Address != "10.0.0.1" || p.Port != 29500 || p.WorkerID != "gang-a" {
		t.Fatalf("the master: %+v", p)
	}
	select {
	case r := <-waiting:
		if !r.Ready || len(r.Peers) != 4 {
			t.Fatalf("the waiting member: %+v", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a waiting rendezvous was not answered when the gang was whole")
	}

	// Rank 3 fails: every other member's attempt ends and the gang is
	// pending again, whole.
	if _, err := w2.Fail(ctx, members[3].ID, api.FailRequest{AttemptID: members[3].AttemptID, Reason: "rank 3 crashed"}); err != nil {
		t.Fatal(err)
	}
	j, err := admin.Job(ctx, job.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range j.Tasks {
		if tk.State != api.TaskPending {
			t.Fatalf("task %d is %s after rank 3 failed, want pending", tk.Index, tk.State)
		}
	}
	if err := w1.Start(ctx, members[0].ID, members[0].AttemptID); !client.IsCode(err, api.CodeStaleAttempt) {
		t.Fatalf("rank 0's ended attempt starting: %v, want stale_attempt", err)
	}
	hb, err := w1.Heartbeat(ctx, api.HeartbeatRequest{RunningTaskIDs: []string{members[0].ID, members[1].ID}})
	if err != nil || len(hb.CancelTaskIDs) != 2 {
		t.Fatalf("heartbeat of the ended members: %+v %v, want both cancelled", hb, err)
	}
	again, err := w2.Acquire(ctx, api.AcquireRequest{MaxTasks: 2, RequestID: "b-3"})
	if err != nil || len(again.Tasks) != 2 || again.Tasks[0].Attempt != 2 {
		t.Fatalf("the gang placed again: %+v %v", again, err)
	}
}
