package state

import (
	"github.com/gpulayer/gpulayer/coordinator/sched/backfill"
	"github.com/gpulayer/gpulayer/coordinator/sched/place"
	"github.com/gpulayer/gpulayer/coordinator/state/pending"
)

// Hold bases. Choosing the backfill hold (backfill.go) merges the slots
// of every worker that could run the head. A basis keeps, for one shape
// of head, each such worker's slots, and takes again only those of the
// workers whose views were dropped since (workerview.go): so after an
// assignment or the end of an attempt the hold costs the workers that
// changed plus a merge over the workers' first slots, not a walk of the
// fleet. A command that may change any worker in place drops every
// basis, as it drops every view; so does a restore. A basis is derived
// from the replicated state alone and never encoded: a restored replica
// builds the same one afresh.

// maxHoldBases bounds the shapes kept at once.
const maxHoldBases = 16

// basisKey is what a worker's eligibility and slots for a head depend
// on besides the worker. A job with affinity rules has no basis (its
// rules are its own).
type basisKey struct {
	slots                        slotShape
	executor, target, capability string
}

// holdBasis is the slots of each worker that could run a head of one
// shape; dirty names the workers to take again.
type holdBasis struct {
	job   *Job // a job of the shape (tests read it)
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

// holdBases are the bases kept; under holdMu.
type holdBases struct {
	m map[basisKey]*holdBasis
}

// dirtyBases notes that workerID's slots may have changed; under holdMu.
func (s *Store) dirtyBases(workerID string) {
	s.holdMu.Lock()
	for _, b := range s.bases.m {
		b.dirty[workerID] = true
	}
	s.holdMu.Unlock()
}

// dropBases forgets every basis; under holdMu.
func (s *Store) dropBases() {
	s.holdMu.Lock()
	s.bases.m = nil
	s.holdMu.Unlock()
}

// holdChoice is the first need slots, in backfill.Compare order, of the
// workers that could run a member of j of per GPUs each, or nil when
// there are fewer. The caller holds holdMu.
func (s *Store) holdChoice(j *Job, per, need int) []backfill.Slot {
	if len(j.Rules()) > 0 || s.views.isOff() {
		var lists [][]backfill.Slot
		for _, w := range s.workers {
			if l := s.eligibleSlots(w, j, per); len(l) > 0 {
				lists = append(lists, l)
			}
		}
		return backfill.First(lists, need)
	}
	b := s.basisFor(j, per)
	if c := b.chosen; c != nil && len(c.slots) == need {
		return c.slots
	}
	out := b.index.First(need)
	b.chosen = nil
	if out != nil {
		b.chosen = &basisChoice{slots: out, workers: map[string]bool{}}
		for _, sl := range out {
			b.chosen.workers[sl.Worker] = true
		}
	}
	return out
}

// basisFor is the basis of j's shape brought up to date: a new one, or
// the kept one with its dirty workers' slots taken again. The choice it
// keeps stands while no worker it chose changed and no changed worker
// now has a slot before its last.
func (s *Store) basisFor(j *Job, per int) *holdBasis {
	k := basisKey{slots: shapeFor(j, per), executor: j.Spec.Executor, target: pending.TargetKey(j.Spec.Target), capability: j.Spec.Capability}
	b, ok := s.bases.m[k]
	if !ok {
		if len(s.bases.m) >= maxHoldBases || s.bases.m == nil {
			s.bases.m = map[basisKey]*holdBasis{}
		}
		b = &holdBasis{job: j, per: per, lists: map[string][]backfill.Slot{}, dirty: map[string]bool{}}
		for _, w := range s.workers {
			if l := s.eligibleSlots(w, j, per); len(l) > 0 {
				b.lists[w.ID] = l
				b.index.Set(w.ID, l)
			}
		}
		s.bases.m[k] = b
		return b
	}
	for id := range b.dirty {
		delete(b.lists, id)
		var l []backfill.Slot
		if w, ok := s.workers[id]; ok {
			l = s.eligibleSlots(w, j, per)
		}
		if len(l) > 0 {
			b.lists[id] = l
		}
		b.index.Set(id, l)
		if c := b.chosen; c != nil {
			if c.workers[id] || (len(l) > 0 && backfill.Compare(l[0], c.slots[len(c.slots)-1]) < 0) {
				b.chosen = nil
			}
		}
	}
	clear(b.dirty)
	return b
}

// eligibleSlots is w's backfill slots for a member of j (place.HoldSlots).
func (s *Store) eligibleSlots(w *Worker, j *Job, per int) []backfill.Slot {
	return place.HoldSlots(s.planView(), w, j, per)
}
