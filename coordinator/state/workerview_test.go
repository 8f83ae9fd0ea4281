package state

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
)

// staleViews lists the workers whose kept view differs from one built
// afresh from the state now, slots included.
func staleViews(s *Store) []string {
	var bad []string
	for _, id := range slices.Sorted(func(yield func(string) bool) {
		for id := range s.views.m {
			if !yield(id) {
				return
			}
		}
	}) {
		kept := s.views.m[id]
		w, ok := s.workers[id]
		if !ok {
			continue // never read: matches walk the workers there are
		}
		fresh := s.buildView(w)
		if !reflect.DeepEqual(kept.offered, fresh.offered) || !reflect.DeepEqual(kept.free, fresh.free) || kept.room != fresh.room {
			bad = append(bad, fmt.Sprintf("%s: kept %+v, now %+v", id, *kept, *fresh))
			continue
		}
		for k, slots := range kept.slots {
			r := k.r
			spec := command.JobSpec{Resources: &r, ExclusiveWorker: k.exclusive, MaxPerWorker: k.maxPerWorker}
			if now := fresh.workerSlots(w, spec, k.per); !reflect.DeepEqual(slots, now) {
				bad = append(bad, fmt.Sprintf("%s slots %+v: kept %+v, now %+v", id, k, slots, now))
			}
		}
	}
	return bad
}

// A kept worker view is never stale: over random histories (every
// command kind, placements through Match), after every command each
// view the store keeps equals one built afresh from its state. Views
// are asked for all workers after every command, so each command meets
// views to drop.
func TestWorkerViewsFollowTheState(t *testing.T) {
	kept := 0
	for seed := range uint64(6) {
		h := newHistory(seed)
		applyWire(t, h.s, command.ImportBootstrap{Generation: 1, Credentials: []command.CredentialRecord{{ID: "adm", Kind: "client", Name: "admin", Roles: []string{"admin"}, Hash: "x", CreatedAt: t0}}, Now: t0})
		for i := 1; i < 500; i++ {
			c := h.next()
			applyWire(t, h.s, c)
			if bad := staleViews(h.s); len(bad) > 0 {
				t.Fatalf("seed %d, entry %d (%T): stale views:\n  %v", seed, i, c, bad)
			}
			for _, w := range h.s.workers {
				h.s.roomOn(w)
				h.s.slotsOf(w, &Job{Spec: command.JobSpec{Resources: &command.Resources{GPUs: 1}}}, 1)
				kept++
			}
		}
	}
	if kept == 0 {
		t.Fatal("no view was ever kept: the histories had no workers")
	}
}

// firstSlots takes the same slots, in the same order, as sorting every
// slot would.
func TestFirstSlotsIsTheSortedPrefix(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	base := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
	for trial := range 200 {
		var lists [][]slot
		var all []slot
		for w := range rng.IntN(12) {
			var l []slot
			for i := range rng.IntN(5) {
				l = append(l, slot{worker: fmt.Sprintf("w%02d", w), index: i, at: base.Add(time.Duration(rng.IntN(4)) * time.Minute), unknown: rng.IntN(5) == 0})
			}
			slices.SortStableFunc(l, compareSlots)
			lists = append(lists, l)
			all = append(all, l...)
		}
		slices.SortFunc(all, compareSlots)
		for _, n := range []int{0, 1, 3, len(all), len(all) + 2} {
			got := firstSlots(lists, n)
			want := all[:min(n, len(all))]
			if !reflect.DeepEqual(got, want) && (len(got) != 0 || len(want) != 0) {
				t.Fatalf("trial %d, first %d: got %+v, want %+v", trial, n, got, want)
			}
		}
	}
}
