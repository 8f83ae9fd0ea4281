package state

import (
	"slices"
	"time"
)

// Holds. The devices a preemption frees go to the task it was made for:
// the preemption holds them on their worker (Worker.Holds) for that task
// until it is assigned, leaves the queue, or the hold's bound passes.
// Placement gives a held device to no other task (heldFromOthers): a
// match passes such a task over, and an assignment naming one is
// refused. A hold is read against the time of the command that reads
// it, so every replica judges it alike.

// holdLive reports whether h still holds its device at now (a zero now,
// a match made with no time: until it is released): its bound has not
// passed and its task still waits.
func (s *Store) holdLive(h DeviceHold, now time.Time) bool {
	if !now.IsZero() && !h.Until.After(now) {
		return false
	}
	t, ok := s.tasks.Lookup(h.TaskID)
	return ok && t.State == taskPending
}

// heldFromOthers reports whether any of devs is held on w, at now, for a
// task other than taskID (a hold for a gang member holds for its whole
// gang: a gang's preemption holds devices for the gang).
func (s *Store) heldFromOthers(w *Worker, devs []string, taskID string, now time.Time) bool {
	for _, h := range w.Holds {
		if !s.sameHolder(h.TaskID, taskID) && slices.Contains(devs, h.Device) && s.holdLive(h, now) {
			return true
		}
	}
	return false
}

// sameHolder reports whether a hold for task a holds for task b: the
// same task, or members of one gang.
func (s *Store) sameHolder(a, b string) bool {
	if a == b {
		return true
	}
	ta, ok := s.tasks.Lookup(a)
	tb, okb := s.tasks.Lookup(b)
	return ok && okb && ta.JobID == tb.JobID && s.jobs.Get(ta.JobID).Spec.Gang
}

// holdsFor reports whether w holds a device, at now, for taskID.
func (s *Store) holdsFor(w *Worker, taskID string, now time.Time) bool {
	for _, h := range w.Holds {
		if h.TaskID == taskID && s.holdLive(h, now) {
			return true
		}
	}
	return false
}

// releaseHolds drops w's holds for taskID and those no longer live at
// now. The slice is replaced, never edited: a capture may hold it. A
// task assigned elsewhere leaves its holds here stale, which holdLive
// already ignores; sweepHolds drops them.
func (s *Store) releaseHolds(w *Worker, taskID string, now time.Time) {
	if len(w.Holds) == 0 {
		return
	}
	kept := slices.DeleteFunc(slices.Clone(w.Holds), func(h DeviceHold) bool {
		return h.TaskID == taskID || !s.holdLive(h, now)
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
