package state

import (
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/sched/place"
)

// A match does not walk sub-queues of tasks asking for more whole GPUs
// than the worker has free: with 500 two-GPU tasks waiting and one GPU
// free, the one-GPU task is found after looking at a handful; a worker
// with no GPU free looks at none.
func TestMatchSkipsListsTooLargeForTheWorker(t *testing.T) {
	s := New()
	addWorkers(t, s, 2, "w1")
	mustApply(t, s, submit("first", 1, 1))
	p := &placer{t: t, s: s, now: at(2)}
	p.fill("w1")
	narrow := submit("narrow", 1, 1)
	narrow.Spec.Priority = 1 // ahead of the wide tasks, which would otherwise hold the GPUs (place.Hold)
	mustApply(t, s, submit("wide", 500, 2), narrow)
	f := place.Match(s.planView(), s.workers["w1"], "", 0, nil, time.Time{})
	if f.Task == nil || f.Task.JobID != "narrow" || f.Examined > 2 {
		t.Fatalf("matched %v after examining %d tasks, want narrow after at most 2", f.Task, f.Examined)
	}
	p.fill("w1")
	if f := place.Match(s.planView(), s.workers["w1"], "", 0, nil, time.Time{}); f.Task != nil || f.Examined != 0 {
		t.Fatalf("a full worker matched %v after examining %d tasks, want none after none", f.Task, f.Examined)
	}
}
