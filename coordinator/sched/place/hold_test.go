package place

import (
	"errors"
	"time"

	"maps"
	"slices"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/command"

	"github.com/gpulayer/gpulayer/coordinator/sched/backfill"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
	"github.com/gpulayer/gpulayer/coordinator/state/teams"
)

// heldDevices is a hold's devices, sorted; none for no hold.
func heldDevices(h *backfill.Hold) []string {
	if h == nil {
		return nil
	}
	return slices.Sorted(maps.Keys(h.Devices))
}

// The head is the top task (priority, then age) of the first team, in
// fair-share order, with room for it: a team at its ceiling is passed.
func TestHeadIsTheFirstTeamWithRoom(t *testing.T) {
	cases := []struct {
		name  string
		setup func(q *queued)
		want  string // the head's task id, "" for none
	}{
		{"nothing queued", func(*queued) {}, ""},
		{"within a team, priority then age", func(q *queued) {
			q.submit("old", "ml", 2, 0)
			q.submit("high", "ml", 2, 5)
			q.submit("later-high", "ml", 1, 5) // another sub-queue
		}, "high-0"},
		{"teams tie on share: by name", func(q *queued) {
			q.submit("b", "research", 2, 9)
			q.submit("a", "ml", 2, 0)
		}, "a-0"},
		{"a team with no room is passed over", func(q *queued) {
			q.submit("a", "ml", 2, 0)
			q.submit("b", "research", 2, 0)
			q.full["ml"] = true
		}, "b-0"},
		{"no team has room", func(q *queued) {
			q.submit("a", "ml", 2, 0)
			q.full["ml"] = true
		}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q := newQueued()
			c.setup(q)
			got := ""
			if h := Head(q); h != nil {
				got = h.ID
			}
			if got != c.want {
				t.Fatalf("head %q, want %q", got, c.want)
			}
		})
	}
}

// TeamRoom is the team's limits over what it holds.
func TestTeamRoom(t *testing.T) {
	q := newQueued()
	q.submit("a", "ml", 2, 0)
	if err := TeamRoom(q, q.jobs["a"], 200); err != nil {
		t.Fatalf("an unbounded team: %v", err)
	}
	q.full["ml"] = true
	if err := TeamRoom(q, q.jobs["a"], 200); !errors.Is(err, teams.ErrRoom) {
		t.Fatalf("a team in full: %v, want teams.ErrRoom", err)
	}
}

// A large head holds the GPUs that free first (free ones, then by
// worker id and device order); a small one holds nothing. The hold read
// through bases is the hold chosen afresh.
func TestHoldOfTheHead(t *testing.T) {
	cases := []struct {
		name string
		gpus int
		gang int // members, 0 for a plain task
		want []string
	}{
		{"a one-GPU task holds nothing", 1, 0, nil},
		{"a two-GPU task holds the first worker's two", 2, 0, []string{"GPU-w1-0", "GPU-w1-1"}},
		{"a gang of three one-GPU members", 1, 3, []string{"GPU-w1-0", "GPU-w1-1", "GPU-w2-0"}},
		{"more than the fleet has: nothing", 4, 2, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q := newQueued()
			q.worker("w2", 4, 4, 0, 0)
			q.worker("w1", 2, 4, 0, 0)
			head := q.submit("big", "ml", c.gpus, 0)
			if c.gang > 0 {
				q.jobs["big"].Spec.Gang, q.jobs["big"].Spec.Count = true, c.gang
			}
			fresh := Hold(q, head, nil)
			if got := heldDevices(fresh); !slices.Equal(got, c.want) {
				t.Fatalf("held %v, want %v", got, c.want)
			}
			var bases Bases
			for range 2 { // a new basis, then the kept one
				if got := heldDevices(Hold(q, head, &bases)); !slices.Equal(got, c.want) {
					t.Fatalf("through bases held %v, want %v", got, c.want)
				}
			}
		})
	}
}

// A basis keeps each worker's slots until the worker is marked dirty:
// Stale names a worker that changed unmarked, and once it is marked the
// basis takes it again and chooses as a choice afresh would.
func TestBasesFollowDirtyWorkers(t *testing.T) {
	q := newQueued()
	w1 := q.worker("w1", 2, 4, 0, 0)
	q.worker("w2", 2, 4, 0, 0)
	head := q.submit("big", "ml", 2, 0)
	j := q.jobs["big"]
	var bases Bases
	if got := heldDevices(Hold(q, head, &bases)); !slices.Equal(got, []string{"GPU-w1-0", "GPU-w1-1"}) {
		t.Fatalf("held %v", got)
	}
	if bad := bases.Stale(q); len(bad) > 0 {
		t.Fatalf("a new basis is stale: %v", bad)
	}
	w1.Status = record.WorkerDraining // w1 takes nothing now
	if bad := bases.Stale(q); len(bad) != 1 {
		t.Fatalf("w1 changed unmarked: stale %v, want it named", bad)
	}
	bases.Dirty("w1")
	if bad := bases.Stale(q); len(bad) > 0 {
		t.Fatalf("a dirty worker is not stale: %v", bad)
	}
	if got := heldDevices(Hold(q, head, &bases)); !slices.Equal(got, []string{"GPU-w2-0", "GPU-w2-1"}) {
		t.Fatalf("after w1 was taken again held %v, want w2's", got)
	}
	if got, want := bases.Choice(q, j, 2, 1), backfill.First([][]backfill.Slot{HoldSlots(q, q.workers["w2"], j, 2)}, 1); !slices.EqualFunc(got, want, func(a, b backfill.Slot) bool { return slices.Equal(a.Devices, b.Devices) }) {
		t.Fatalf("Choice %+v, a choice afresh %+v", got, want)
	}
	q.worker("a0", 2, 4, 0, 0) // free, and before w2 in the order: the kept choice no longer stands
	bases.Dirty("a0")
	if got := heldDevices(Hold(q, head, &bases)); !slices.Equal(got, []string{"GPU-a0-0", "GPU-a0-1"}) {
		t.Fatalf("after a0 came, held %v, want a0's", got)
	}
	delete(q.workers, "a0")
	bases.Dirty("a0")
	bases.Drop()
	w1.Status = record.WorkerReady
	if bad := bases.Stale(q); len(bad) > 0 {
		t.Fatalf("dropped bases are stale: %v", bad)
	}
	if got := heldDevices(Hold(q, head, &bases)); !slices.Equal(got, []string{"GPU-w1-0", "GPU-w1-1"}) {
		t.Fatalf("after a drop held %v, want w1's again", got)
	}
}

// A head with affinity rules has no basis: its slots are its own, so a
// basis kept for its shape, even a stale one, is not read for it.
func TestHoldOfAHeadWithRulesIsChosenAfresh(t *testing.T) {
	q := newQueued()
	w1 := q.worker("w1", 2, 4, 0, 0)
	q.worker("w2", 2, 4, 0, 0)
	plain := q.submit("plain", "ml", 2, 0)
	var bases Bases
	if got := heldDevices(Hold(q, plain, &bases)); !slices.Equal(got, []string{"GPU-w1-0", "GPU-w1-1"}) {
		t.Fatalf("held %v", got)
	}
	w1.Status = record.WorkerDraining // unmarked: the basis is stale now
	ruled := q.submit("ruled", "ml", 2, 0)
	q.jobs["ruled"].SetRules([]command.AffinityRule{{Label: "zone", Value: "a", Weight: 10}})
	if got := heldDevices(Hold(q, ruled, &bases)); !slices.Equal(got, []string{"GPU-w2-0", "GPU-w2-1"}) {
		t.Fatalf("a head with rules held %v, want w2's (chosen afresh)", got)
	}
}

// PickFor leaves the hold's GPUs to the head, unless the task may
// backfill them or a preemption freed GPUs on the worker for it.
func TestPickForLeavesTheHold(t *testing.T) {
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	q := newQueued()
	w := q.worker("w1", 2, 4, 0, 0)
	head := q.submit("big", "ml", 2, 0)
	h := Hold(q, head, nil)
	small := q.submit("small", "ml", 1, 0)
	if devs, ok := PickFor(q, w, q.jobs["small"], small, h, now); ok {
		t.Fatalf("a task with no timeout took %v from under the hold", devs)
	}
	if devs, ok := PickFor(q, w, q.jobs["big"], head, h, now); !ok || len(devs) != 2 {
		t.Fatalf("the head itself: %v %v", devs, ok)
	}
	w.Holds = []record.DeviceHold{{Device: "GPU-w1-0", TaskID: small.ID, Until: now.Add(time.Minute)}}
	if devs, ok := PickFor(q, w, q.jobs["small"], small, h, now); !ok || len(devs) != 1 {
		t.Fatalf("a task a preemption freed GPUs for: %v %v", devs, ok)
	}
}
