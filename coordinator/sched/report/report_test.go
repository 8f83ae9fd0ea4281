package report

import (
	"slices"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/sched/place"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
)

// taskIDs is a team queue's task ids, in order.
func taskIDs(tq TeamQueue) []string {
	var out []string
	for _, t := range tq.Tasks {
		out = append(out, t.TaskID)
	}
	return out
}

// The queue lists teams in share order and each team's tasks as the
// matcher takes them, across its sub-queues, each with its job's pending
// reason (place.Why); at most limit a team, every queued task counted.
func TestQueue(t *testing.T) {
	q := newFleet()
	q.worker("w1", 1)
	q.submit("old", "ml", command.Resources{GPUs: 1}, 0)
	q.submit("wide", "ml", command.Resources{GPUs: 4}, 0) // another sub-queue, too wide for the fleet
	q.submit("high", "ml", command.Resources{GPUs: 1}, 5)
	q.submit("top", "ml", command.Resources{GPUs: 4}, 9)
	q.submit("young", "ml", command.Resources{GPUs: 1}, 0)
	q.submit("r", "research", command.Resources{GPUs: 1}, 0)
	all := Queue(q, "", 10)
	if len(all) != 2 || all[0].Team != "ml" || all[1].Team != "research" {
		t.Fatalf("teams %+v, want ml then research (tied shares, by name)", all)
	}
	// The two sub-queues merged: priority first, then age, across them.
	if got := taskIDs(all[0]); !slices.Equal(got, []string{"top-0", "high-0", "old-0", "wide-0", "young-0"}) || all[0].Queued != 5 {
		t.Fatalf("ml's order %v (queued %d), want top, high, old, wide, young (5)", got, all[0].Queued)
	}
	for _, task := range all[0].Tasks {
		if want := place.Why(q, q.jobs[task.JobID]); task.Reason != want {
			t.Fatalf("task %s's reason %q, want its job's %q", task.TaskID, task.Reason, want)
		}
	}
	if all[0].Tasks[3].Reason == "" {
		t.Fatal("a task no worker could run gives no reason")
	}
	one := Queue(q, "ml", 1)
	if len(one) != 1 || !slices.Equal(taskIDs(one[0]), []string{"top-0"}) || one[0].Queued != 5 {
		t.Fatalf("ml limited to one: %+v", one)
	}
	if none := Queue(q, "ml", -1); len(none) != 1 || len(none[0].Tasks) != 0 || none[0].Queued != 5 {
		t.Fatalf("a negative limit lists nothing, counts all: %+v", none)
	}
	if got := Queue(q, "nobody", 10); len(got) != 0 {
		t.Fatalf("a team with nothing queued: %+v", got)
	}
}

// MIG demand is what the queue asks by profile, and the ready workers
// where a task could run but for its devices.
func TestPendingMIGDemand(t *testing.T) {
	q := newFleet()
	q.worker("w2", 1)
	q.worker("w1", 1)
	q.worker("w3", 1).Status = record.WorkerDraining
	for _, id := range []string{"a", "b"} {
		q.submit(id, "ml", command.Resources{MIGProfile: "3g.40gb"}, 0)
	}
	q.submit("plain", "ml", command.Resources{GPUs: 1}, 0)
	got := PendingMIGDemand(q)
	if len(got) != 1 || got[0].Profile != "3g.40gb" || got[0].Tasks != 2 || !slices.Equal(got[0].Executors, []string{"exec"}) || !slices.Equal(got[0].Workers, []string{"w1", "w2"}) {
		t.Fatalf("demand %+v, want 3g.40gb: 2 tasks, exec, on w1 and w2", got)
	}
}

// Holders and the GPU counts read a worker's active tasks: a device held
// whole or by a share is allocated, the rest free; a revoked worker is
// not counted.
func TestHoldersAndCounts(t *testing.T) {
	f := newFleet()
	w := f.worker("w1", 3)
	f.run(w, "GPU-w1-1")
	holders := Holders(w, f.holding)
	if len(holders) != 1 || len(holders["GPU-w1-1"]) != 1 || holders["GPU-w1-1"][0].TaskID != "on-GPU-w1-1" {
		t.Fatalf("holders %+v", holders)
	}
	by := map[string]GPUCounts{}
	CountGPUs(w, f.holding, by)
	if c := by["H100"]; c.Allocated != 1 || c.Free != 2 || c.Unhealthy != 0 {
		t.Fatalf("counts %+v, want 1 allocated, 2 free", c)
	}
	w.Status = record.WorkerRevoked
	by = map[string]GPUCounts{}
	CountGPUs(w, nil, by)
	if len(by) != 0 {
		t.Fatalf("a revoked worker counted: %+v", by)
	}
}

// A gang's queued task asks what one member asks.
func TestQueueCountsAGangsMember(t *testing.T) {
	q := newFleet()
	q.submit("g", "ml", command.Resources{GPUs: 2}, 0)
	q.jobs["g"].Spec.Gang, q.jobs["g"].Spec.Count = true, 3
	got := Queue(q, "", 10)
	if len(got) != 1 || len(got[0].Tasks) != 1 || !got[0].Tasks[0].Gang || got[0].Tasks[0].CentiGPUs != 200 {
		t.Fatalf("%+v, want one gang task of 200 hundredths", got)
	}
}
