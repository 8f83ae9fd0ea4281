package state

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/sched/backfill"
	"github.com/gpulayer/gpulayer/coordinator/sched/place"
)

// staleViews lists the workers whose kept view differs from one built
// afresh from the state now.
func staleViews(s *Store) []string {
	var bad []string
	for _, id := range slices.Sorted(func(yield func(string) bool) {
		for id := range s.derived.KeptViews() {
			if !yield(id) {
				return
			}
		}
	}) {
		kept := s.derived.KeptViews()[id]
		w, ok := s.workers[id]
		if !ok {
			continue // never read: matches walk the workers there are
		}
		fresh := s.buildView(w)
		if !reflect.DeepEqual(kept, fresh) {
			bad = append(bad, fmt.Sprintf("%s: kept %+v, now %+v", id, *kept, *fresh))
		}
	}
	return bad
}

// A kept worker view is never stale: over random histories (every
// command kind, placements through Match), after every command each
// view the store keeps equals one built afresh from its state, and so do
// the slots each hold basis keeps and the queue's sub-queue slices. Views and bases are asked for after
// every command, so each command meets them to drop.
func TestWorkerViewsFollowTheState(t *testing.T) {
	kept := 0
	heads := []*Job{ // heads of two shapes, to keep two hold bases
		{Spec: command.JobSpec{Executor: "exec", Resources: &command.Resources{GPUs: 2}}},
		{Spec: command.JobSpec{Executor: "exec", Resources: &command.Resources{GPUs: 1}, ExclusiveWorker: true}},
	}
	for seed := range uint64(6) {
		h := newHistory(seed)
		applyWire(t, h.s, command.ImportBootstrap{Generation: 1, Credentials: []command.CredentialRecord{{ID: "adm", Kind: "client", Name: "admin", Roles: []string{"admin"}, Hash: "x", CreatedAt: t0}}, Now: t0})
		for i := 1; i < 500; i++ {
			c := h.next()
			applyWire(t, h.s, c)
			if bad := append(append(staleViews(h.s), h.s.derived.Bases().Stale(h.s.planView())...), h.s.queue.Consistent()...); len(bad) > 0 {
				t.Fatalf("seed %d, entry %d (%T): stale views:\n  %v", seed, i, c, bad)
			}
			for _, w := range h.s.workers {
				h.s.planView().WorkerView(w)
				kept++
			}
			for _, j := range heads {
				got := h.s.derived.Bases().Choice(h.s.planView(), j, j.Spec.Resources.GPUs, 3)
				var lists [][]backfill.Slot
				for _, w := range h.s.workers {
					lists = append(lists, place.HoldSlots(h.s.planView(), w, j, j.Spec.Resources.GPUs)) // the views are checked above
				}
				if want := backfill.First(lists, 3); !reflect.DeepEqual(got, want) {
					t.Fatalf("seed %d, entry %d (%T): the hold chose %+v, a choice afresh %+v", seed, i, c, got, want)
				}
			}
		}
	}
	if kept == 0 {
		t.Fatal("no view was ever kept: the histories had no workers")
	}
}

// The placement rules a match reads from the worker's view: a worker
// running a task of an exclusive job takes nothing else, and a job's
// max_per_worker counts its tasks already there.
func TestViewKeepsThePlacementRules(t *testing.T) {
	cases := []struct {
		name  string
		first func(command.SubmitJob) command.SubmitJob
		then  command.SubmitJob
		want  bool // whether the second task is placed beside the first
	}{
		{"exclusive job's task holds the worker", func(c command.SubmitJob) command.SubmitJob { c.Spec.ExclusiveWorker = true; return c }, submit("y", 1, 1), false},
		{"a plain task leaves room", func(c command.SubmitJob) command.SubmitJob { return c }, submit("y", 1, 1), true},
		{"max_per_worker counts the job's tasks there", func(c command.SubmitJob) command.SubmitJob { c.Spec.MaxPerWorker = 1; return c }, command.SubmitJob{}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := New()
			mustApply(t, s, register("w1", "GPU-0", "GPU-1"), tc.first(submit("x", 2, 1)))
			if _, _, ok := placeOn(t, s, "w1"); !ok {
				t.Fatal("the first task was not placed")
			}
			if tc.then.JobID != "" {
				mustApply(t, s, tc.then)
			}
			if task, devs, ok := placeOn(t, s, "w1"); ok != tc.want {
				t.Fatalf("second placement: %s on %v (%v), want placed %v", task, devs, ok, tc.want)
			}
		})
	}
}
