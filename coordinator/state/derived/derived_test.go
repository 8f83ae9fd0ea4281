package derived

import (
	"slices"
	"sync"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/sched/backfill"
	"github.com/gpulayer/gpulayer/coordinator/sched/place"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
)

// builds counts the views built, by worker.
type builds map[string]int

func (b builds) build(w *record.Worker) *place.WorkerView {
	b[w.ID]++
	return &place.WorkerView{}
}

// A view is built once and kept until its worker's view is dropped, or
// every view; while a command that may change workers in place applies
// (DropAll(true)) none is kept, and after it (DropAll(false)) views are
// kept again.
func TestViewsAreKeptUntilDropped(t *testing.T) {
	var c Cache
	b := builds{}
	w1, w2 := &record.Worker{ID: "w1"}, &record.Worker{ID: "w2"}
	first := c.View(w1, b.build)
	if again := c.View(w1, b.build); again != first || b["w1"] != 1 {
		t.Fatalf("a kept view was built again (%d builds)", b["w1"])
	}
	c.View(w2, b.build)
	c.DropView("w1")
	c.View(w1, b.build)
	c.View(w2, b.build)
	if b["w1"] != 2 || b["w2"] != 1 {
		t.Fatalf("after dropping w1: builds %v, want w1 2, w2 1", b)
	}
	c.DropAll(true)
	c.View(w1, b.build)
	c.View(w1, b.build)
	if b["w1"] != 4 || len(c.KeptViews()) != 0 {
		t.Fatalf("while off: builds %v, kept %d; want every read built, none kept", b, len(c.KeptViews()))
	}
	c.DropAll(false)
	c.View(w1, b.build)
	c.View(w1, b.build)
	if b["w1"] != 5 || len(c.KeptViews()) != 1 {
		t.Fatalf("back on: builds %v, kept %d", b, len(c.KeptViews()))
	}
}

// The hold and the team order are chosen once a state version; the hold
// is chosen with the bases while views are kept, without them while
// they are not.
func TestOneChoiceAVersion(t *testing.T) {
	var c Cache
	chosen := 0
	var gotBases []bool
	choose := func(b *place.Bases) *backfill.Hold {
		chosen++
		gotBases = append(gotBases, b != nil)
		return &backfill.Hold{JobID: "j"}
	}
	h := c.Hold(1, choose)
	if c.Hold(1, choose) != h || chosen != 1 {
		t.Fatalf("version 1 chosen %d times", chosen)
	}
	c.DropAll(true)
	c.Hold(2, choose)
	c.DropAll(false)
	c.Hold(3, choose)
	if !slices.Equal(gotBases, []bool{true, false, true}) {
		t.Fatalf("bases given %v, want true, false (views off), true", gotBases)
	}
	ordered := 0
	order := func() []string { ordered++; return []string{"a", "b"} }
	c.TeamOrder(7, order)
	c.TeamOrder(7, order)
	c.TeamOrder(8, order)
	if ordered != 2 {
		t.Fatalf("the team order was computed %d times for two versions", ordered)
	}
}

// Matches read views concurrently while drops come in: no race (go test
// -race), and every read answers a view.
func TestViewsConcurrently(t *testing.T) {
	var c Cache
	ws := []*record.Worker{{ID: "w1"}, {ID: "w2"}, {ID: "w3"}}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for i := range 500 {
				if c.View(ws[i%len(ws)], func(*record.Worker) *place.WorkerView { return &place.WorkerView{} }) == nil {
					t.Error("no view")
				}
			}
		})
	}
	for i := range 200 {
		if i%50 == 0 {
			c.DropAll(i%100 == 0)
		}
		c.DropView(ws[i%len(ws)].ID)
	}
	c.DropAll(false)
	wg.Wait()
}
