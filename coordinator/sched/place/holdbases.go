package place

import (
	"fmt"
	"reflect"
	"sync"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/sched/backfill"
	"github.com/gpulayer/gpulayer/coordinator/state/pending"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
)

// Hold bases. Choosing the backfill hold (Hold) merges the slots of every
// worker that could run the head. A basis keeps, for one shape of head,
// each such worker's slots, and takes again only those of the workers
// marked dirty since (Bases.Dirty, called where a worker's view is
// dropped): so after an assignment or the end of an attempt the hold
// costs the workers that changed plus a merge over the workers' first
// slots, not a walk of the fleet. A command that may change any worker
// in place drops every basis (Bases.Drop), as it drops every view; so
// does a restore. A basis is derived from the replicated state alone and
// never encoded: a restored replica builds the same one afresh.

// maxHoldBases bounds the shapes kept at once.
const maxHoldBases = 16

// Bases are the hold bases kept; the zero value keeps none yet. Safe for
// concurrent use.
type Bases struct {
	mu sync.Mutex
	m  map[basisKey]*basis
}

// basisKey is what a worker's eligibility and slots for a head depend
// on besides the worker: the shape of its slots, its executor, target
// and capability. A job with affinity rules has no basis.
type basisKey struct {
	slots                        slotShape
	executor, target, capability string
}

// slotShape is what a worker's backfill slots depend on besides the
// worker and its view: the resources asked, the GPUs per member and the
// job's placement rules.
type slotShape struct {
	r            command.Resources
	per          int
	exclusive    bool
	maxPerWorker int
}

// basis is the slots of each worker that could run a head of one shape;
// dirty names the workers to take again.
type basis struct {
	job   *record.Job // a job of the shape, to take slots again for
	per   int
	lists map[string][]backfill.Slot
	index backfill.Index // the same lists, by their first slot
	dirty map[string]bool
	// chosen is the last choice made from the basis, kept while it
	// stands (basisFor).
	chosen *basisChoice
}

// basisChoice is the first slots of a basis, as a hold chose them: any
// head of the basis's shape asking as many chooses the same.
type basisChoice struct {
	slots   []backfill.Slot
	workers map[string]bool
}

// Dirty notes that workerID's slots may have changed.
func (b *Bases) Dirty(workerID string) {
	b.mu.Lock()
	for _, bs := range b.m {
		bs.dirty[workerID] = true
	}
	b.mu.Unlock()
}

// Drop forgets every basis.
func (b *Bases) Drop() {
	b.mu.Lock()
	b.m = nil
	b.mu.Unlock()
}

// Choice is the first need slots, in backfill.Compare order, of the
// workers that could run a member of j of per GPUs each, or nil when
// there are fewer.
func (b *Bases) Choice(v HoldView, j *record.Job, per, need int) []backfill.Slot {
	b.mu.Lock()
	defer b.mu.Unlock()
	bs := b.basisFor(v, j, per)
	if c := bs.chosen; c != nil && len(c.slots) == need {
		return c.slots
	}
	out := bs.index.First(need)
	bs.chosen = nil
	if out != nil {
		bs.chosen = &basisChoice{slots: out, workers: map[string]bool{}}
		for _, sl := range out {
			bs.chosen.workers[sl.Worker] = true
		}
	}
	return out
}

// basisFor is the basis of j's shape brought up to date: a new one, or
// the kept one with its dirty workers' slots taken again. The choice it
// keeps stands while no worker it chose changed and no changed worker
// now has a slot before its last. The caller holds mu.
func (b *Bases) basisFor(v HoldView, j *record.Job, per int) *basis {
	spec := j.Spec
	k := basisKey{
		slots:    slotShape{r: spec.Asked(), per: per, exclusive: spec.ExclusiveWorker, maxPerWorker: spec.MaxPerWorker},
		executor: spec.Executor, target: pending.TargetKey(spec.Target), capability: spec.Capability,
	}
	bs, ok := b.m[k]
	if !ok {
		if len(b.m) >= maxHoldBases || b.m == nil {
			b.m = map[basisKey]*basis{}
		}
		bs = &basis{job: j, per: per, lists: map[string][]backfill.Slot{}, dirty: map[string]bool{}}
		for w := range v.AllWorkers() {
			if l := HoldSlots(v, w, j, per); len(l) > 0 {
				bs.lists[w.ID] = l
				bs.index.Set(w.ID, l)
			}
		}
		b.m[k] = bs
		return bs
	}
	for id := range bs.dirty {
		delete(bs.lists, id)
		var l []backfill.Slot
		if w := v.Worker(id); w != nil {
			l = HoldSlots(v, w, j, per)
		}
		if len(l) > 0 {
			bs.lists[id] = l
		}
		bs.index.Set(id, l)
		if c := bs.chosen; c != nil {
			if c.workers[id] || (len(l) > 0 && backfill.Compare(l[0], c.slots[len(c.slots)-1]) < 0) {
				bs.chosen = nil
			}
		}
	}
	clear(bs.dirty)
	return bs
}

// Stale lists, for a test or an invariant check, the workers whose slots
// a kept basis holds, not marked dirty, that differ from their slots
// taken afresh from v, or that v no longer has.
func (b *Bases) Stale(v HoldView) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var bad []string
	for k, bs := range b.m {
		for id := range bs.lists {
			if v.Worker(id) == nil && !bs.dirty[id] {
				bad = append(bad, fmt.Sprintf("basis %+v keeps slots of %s, which is gone", k, id))
			}
		}
		for w := range v.AllWorkers() {
			if bs.dirty[w.ID] {
				continue
			}
			if got, want := bs.lists[w.ID], HoldSlots(v, w, bs.job, bs.per); !reflect.DeepEqual(got, want) && len(got)+len(want) > 0 {
				bad = append(bad, fmt.Sprintf("basis %+v, %s: kept %+v, now %+v", k, w.ID, got, want))
			}
		}
	}
	return bad
}
