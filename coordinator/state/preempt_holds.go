package state

import (
	"slices"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/sched/place"
)

// Holds. The devices a preemption frees go to the task it was made for
// (sched/place/holds.go says how a hold is read); the state keeps them
// on their worker (Worker.Holds) and drops them here.

// releaseHolds drops w's holds for taskID and those no longer live at
// now. The slice is replaced, never edited: a capture may hold it. A
// task assigned elsewhere leaves its holds here stale, which place.HoldLive
// already ignores; sweepHolds drops them.
func (s *Store) releaseHolds(w *Worker, taskID string, now time.Time) {
	if len(w.Holds) == 0 {
		return
	}
	kept := slices.DeleteFunc(slices.Clone(w.Holds), func(h DeviceHold) bool {
		return h.TaskID == taskID || !place.HoldLive(s.planView(), h, now)
	})
	if len(kept) == len(w.Holds) {
		return
	}
	if len(kept) == 0 {
		kept = nil
	}
	w.Holds = kept
	s.markPending() // what was held may be given to others now
}

// sweepHolds drops, on every worker, the holds no longer live at now.
func (s *Store) sweepHolds(now time.Time) {
	for _, w := range s.workers {
		s.releaseHolds(w, "", now)
	}
}
