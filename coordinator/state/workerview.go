package state

import (
	"sync"

	"github.com/gpulayer/gpulayer/coordinator/command"
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

// viewCache holds the views of the current state. Matches build views
// under the store's read lock, concurrently, so the map has a lock of
// its own; the drops happen under the write lock.
type viewCache struct {
	mu  sync.Mutex
	off bool // a command that may change workers in place is applying
	m   map[string]*place.WorkerView
}

// dropView forgets w's view (its active tasks changed), and its slots
// in the hold bases (place.Bases).
func (s *Store) dropView(workerID string) {
	s.views.mu.Lock()
	delete(s.views.m, workerID)
	s.views.mu.Unlock()
	s.bases.Dirty(workerID)
}

// dropViews forgets every view and hold basis, and, while keepOff, keeps
// none built.
func (s *Store) dropViews(keepOff bool) {
	s.views.mu.Lock()
	s.views.m = nil
	s.views.off = keepOff
	s.views.mu.Unlock()
	s.bases.Drop()
}

// isOff reports whether views are being kept now.
func (v *viewCache) isOff() bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.off
}

// viewOf is w's view, from the cache when it holds one.
func (s *Store) viewOf(w *Worker) *place.WorkerView {
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
			s.views.m = map[string]*place.WorkerView{}
		}
		s.views.m[w.ID] = v
	}
	s.views.mu.Unlock()
	return v
}

// buildView derives w's view from the state (place.NewWorkerView).
func (s *Store) buildView(w *Worker) *place.WorkerView {
	return place.NewWorkerView(w, s.holding, s.inuse.endOf)
}

// holding is an active task as placement reads it: the task and its job.
func (s *Store) holding(taskID string) place.Holding {
	t := s.tasks.Get(taskID)
	return place.Holding{Task: t, Job: s.jobs.Get(t.JobID)}
}
