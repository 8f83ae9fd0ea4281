package state

import (
	"cmp"
	"slices"
	"sync"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/sched/backfill"
	"github.com/gpulayer/gpulayer/coordinator/sched/fit"
	"github.com/gpulayer/gpulayer/coordinator/sched/place"
)

// Worker views. A match reads the same facts about a worker's devices
// again and again: which are offered (health, approval, identity, cordon,
// MIG layout), which its active tasks hold whole or by a share and until
// about when, and what is free. A view derives them once per worker and
// keeps them until they may change:
//
//   - the worker's active tasks change (an assignment, a start, an
//     attempt's end): the view of that worker is dropped (dropView, at the
//     points that change Worker.Hold, Worker.Release and the expected ends);
//   - any command other than the task commands below is applied: every
//     view is dropped, and none is kept while the command applies, since
//     such a command may change a worker's record (its devices, approval,
//     cordons, status) in place;
//   - a restore: every view is dropped.
//
// A view is a function of the replicated state alone, built lazily from
// it, so a replica restored from a snapshot and one that replayed the log
// read the same views; it is never encoded.

// viewSafe are the commands that change a worker only through its active
// tasks (each such change drops that worker's view): the commands of the
// scheduling hot path.
var viewSafe = map[command.Type]bool{
	command.TypeSubmitJob:   true,
	command.TypeAssignTask:  true,
	command.TypeAssignGang:  true,
	command.TypeStartTask:   true,
	command.TypeAppendLogs:  true,
	command.TypeFinishTask:  true,
	command.TypeAppendAudit: true,
}

// viewDevice is one offered device of a worker and what holds it.
type viewDevice struct {
	dev    command.Device
	whole  bool   // an active task holds it whole
	shared bool   // active tasks hold shares of it
	used   uint64 // the MiB those shares hold
	end    backfill.End
}

// busy reports whether an active task holds d, whole or by a share.
func (d viewDevice) busy() bool { return d.whole || d.shared }

// workerView is what one worker offers now.
type workerView struct {
	offered []viewDevice     // the offered devices, in the worker's order
	free    []command.Device // offered devices no active task holds
	room    place.Room
	// exclusive is whether an active task's job asks for the worker to
	// itself; perJob counts the active tasks of each job (canRun).
	exclusive bool
	perJob    map[string]int
}

// viewCache holds the views of the current state. Matches build views
// under the store's read lock, concurrently, so the map has a lock of
// its own; the drops happen under the write lock.
type viewCache struct {
	mu  sync.Mutex
	off bool // a command that may change workers in place is applying
	m   map[string]*workerView
}

// dropView forgets w's view (its active tasks changed), and its slots
// in the hold bases (holdbasis.go).
func (s *Store) dropView(workerID string) {
	s.views.mu.Lock()
	delete(s.views.m, workerID)
	s.views.mu.Unlock()
	s.dirtyBases(workerID)
}

// dropViews forgets every view and hold basis, and, while keepOff, keeps
// none built.
func (s *Store) dropViews(keepOff bool) {
	s.views.mu.Lock()
	s.views.m = nil
	s.views.off = keepOff
	s.views.mu.Unlock()
	s.dropBases()
}

// isOff reports whether views are being kept now.
func (v *viewCache) isOff() bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.off
}

// viewOf is w's view, from the cache when it holds one.
func (s *Store) viewOf(w *Worker) *workerView {
	s.views.mu.Lock()
	v, ok := s.views.m[w.ID]
	off := s.views.off
	s.views.mu.Unlock()
	if ok {
		return v
	}
	v = s.buildView(w)
	if off {
		return v
	}
	s.views.mu.Lock()
	if !s.views.off {
		if s.views.m == nil {
			s.views.m = map[string]*workerView{}
		}
		s.views.m[w.ID] = v
	}
	s.views.mu.Unlock()
	return v
}

// buildView derives w's view from the state.
func (s *Store) buildView(w *Worker) *workerView {
	whole, shared := s.deviceUse(w)
	var ends map[string]backfill.End
	if w.HeldCount() > 0 {
		ends = s.deviceEnds(w)
	}
	v := &workerView{}
	for id := range w.Held() {
		j := s.jobs.Get(s.tasks.Get(id).JobID)
		v.exclusive = v.exclusive || j.Spec.ExclusiveWorker
		if v.perJob == nil {
			v.perJob = map[string]int{}
		}
		v.perJob[j.ID]++
	}
	for _, d := range w.Devices {
		if !fit.Offered(w, d) {
			continue
		}
		used, isShared := shared[d.UUID]
		vd := viewDevice{dev: d, whole: whole[d.UUID], shared: isShared, used: used, end: ends[d.UUID]}
		v.offered = append(v.offered, vd)
		if !vd.busy() {
			v.free = append(v.free, d)
		}
		if vd.whole {
			continue
		}
		switch {
		case d.MIGEnabled:
		case d.MIGProfile != "":
			v.room.Partial = v.room.Partial || !isShared
		case !isShared:
			v.room.Whole++
			v.room.Partial = true
		case used < d.MemoryMiB:
			v.room.Partial = true
		}
	}
	return v
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

// shapeFor is the slot shape of a member of j of per GPUs.
func shapeFor(j *Job, per int) slotShape {
	return slotShape{r: j.Spec.Asked(), per: per, exclusive: j.Spec.ExclusiveWorker, maxPerWorker: j.Spec.MaxPerWorker}
}

// workerSlots splits the view's devices that fit spec into members of
// per GPUs, earliest free first, as many as its placement rules allow.
func (v *workerView) workerSlots(w *Worker, spec command.JobSpec, per int) []backfill.Slot {
	type dev struct {
		uuid    string
		end     backfill.End
		unknown bool
	}
	var devs []dev
	for _, d := range v.offered {
		if fit.DeviceFits(d.dev, spec.Resources) {
			devs = append(devs, dev{uuid: d.dev.UUID, end: d.end, unknown: d.busy() && d.end.Unknown})
		}
	}
	slices.SortStableFunc(devs, func(a, b dev) int {
		return cmp.Or(backfill.CompareUnknown(a.unknown, b.unknown), a.end.At.Compare(b.end.At))
	})
	n := len(devs) / per
	if spec.ExclusiveWorker {
		n = min(n, 1)
	}
	if spec.MaxPerWorker > 0 {
		n = min(n, spec.MaxPerWorker)
	}
	if w.MaxTasks > 0 {
		n = min(n, w.MaxTasks)
	}
	out := make([]backfill.Slot, 0, n)
	for i := range n {
		sl := backfill.Slot{Worker: w.ID, Index: i}
		for _, d := range devs[i*per : (i+1)*per] {
			sl.Devices = append(sl.Devices, d.uuid)
			sl.Unknown = sl.Unknown || d.unknown
			if d.end.At.After(sl.At) {
				sl.At = d.end.At
			}
		}
		out = append(out, sl)
	}
	// A member with a device of unknown end may come before a later one
	// by its known ends; put them in the order the hold takes them.
	slices.SortStableFunc(out, backfill.Compare)
	return out
}
