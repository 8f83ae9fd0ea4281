// Package derived keeps what placement reads that is a function of the
// replicated state alone and costs too much to work out on every read:
// each worker's view (what it offers, what its tasks hold and until
// when), the backfill hold's bases, and the backfill hold and the teams'
// fair-share order of one state version. Each is built lazily from the
// state and dropped where what it came from changes:
//
//   - a worker's view when its active tasks change (DropView, which also
//     marks its slots in the hold bases to be taken again);
//   - every view and basis when a command that may change a worker's
//     record in place applies, none being kept meanwhile, and at a
//     restore (DropAll);
//   - the hold and the team order with every new state version.
//
// Nothing here is encoded: a replica restored from a snapshot builds the
// same afresh as one that replayed the log. Matches read the cache under
// the store's read lock, concurrently, so each part has a lock of its
// own; the drops happen under the store's write lock.
package derived

import (
	"maps"
	"sync"

	"github.com/gpulayer/gpulayer/coordinator/sched/backfill"
	"github.com/gpulayer/gpulayer/coordinator/sched/place"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
)

// Cache is the derived indexes of one store; the zero value holds none.
type Cache struct {
	vmu   sync.Mutex
	off   bool // a command that may change workers in place is applying
	views map[string]*place.WorkerView
	bases place.Bases

	hmu  sync.Mutex
	hold versioned[*backfill.Hold]

	omu   sync.Mutex
	order versioned[[]string]
}

// versioned is a value of one state version.
type versioned[T any] struct {
	version uint64
	ok      bool
	v       T
}

// View is w's view: the one kept, or build's, kept unless a command that
// may change workers in place is applying.
func (c *Cache) View(w *record.Worker, build func(*record.Worker) *place.WorkerView) *place.WorkerView {
	c.vmu.Lock()
	v, ok := c.views[w.ID]
	off := c.off
	c.vmu.Unlock()
	if ok {
		return v
	}
	v = build(w)
	if off {
		return v
	}
	c.vmu.Lock()
	if !c.off {
		if c.views == nil {
			c.views = map[string]*place.WorkerView{}
		}
		c.views[w.ID] = v
	}
	c.vmu.Unlock()
	return v
}

// DropView forgets a worker's view (its active tasks changed), and marks
// its slots in the hold bases to be taken again.
func (c *Cache) DropView(workerID string) {
	c.vmu.Lock()
	delete(c.views, workerID)
	c.vmu.Unlock()
	c.bases.Dirty(workerID)
}

// DropAll forgets every view and hold basis and, while keepOff, keeps
// none built.
func (c *Cache) DropAll(keepOff bool) {
	c.vmu.Lock()
	c.views = nil
	c.off = keepOff
	c.vmu.Unlock()
	c.bases.Drop()
}

// Hold is the backfill hold of state version: the one kept, or choose's,
// given the hold bases, or nil while no view is kept (a command that
// may change workers in place is applying: the choice is made afresh).
func (c *Cache) Hold(version uint64, choose func(bases *place.Bases) *backfill.Hold) *backfill.Hold {
	c.hmu.Lock()
	defer c.hmu.Unlock()
	if c.hold.ok && c.hold.version == version {
		return c.hold.v
	}
	c.vmu.Lock()
	off := c.off
	c.vmu.Unlock()
	bases := &c.bases
	if off {
		bases = nil
	}
	c.hold = versioned[*backfill.Hold]{version: version, ok: true, v: choose(bases)}
	return c.hold.v
}

// TeamOrder is the teams' order of state version: the one kept, or
// order's. The caller must not change it.
func (c *Cache) TeamOrder(version uint64, order func() []string) []string {
	c.omu.Lock()
	defer c.omu.Unlock()
	if c.order.ok && c.order.version == version {
		return c.order.v
	}
	c.order = versioned[[]string]{version: version, ok: true, v: order()}
	return c.order.v
}

// KeptViews is a copy of the views kept now, by worker id, for a check
// that each equals one built afresh.
func (c *Cache) KeptViews() map[string]*place.WorkerView {
	c.vmu.Lock()
	defer c.vmu.Unlock()
	return maps.Clone(c.views)
}

// Bases is the hold bases, for a check that they follow the state.
func (c *Cache) Bases() *place.Bases { return &c.bases }
