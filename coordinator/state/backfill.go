package state

import (
	"time"

	"github.com/gpulayer/gpulayer/coordinator/sched/backfill"
	"github.com/gpulayer/gpulayer/coordinator/sched/place"
)

// The backfill hold is chosen by place.Hold, of the head place.Head
// picks, from the replicated state alone; the store keeps the hold of
// the current version, and the hold bases (place.Bases) that let a
// choice after an assignment read only the workers that changed.

// holdCache keeps the hold of one state version.
type holdCache struct {
	version uint64
	ok      bool
	hold    *backfill.Hold
}

// holdFor returns the current hold, or nil. It is a function of the
// replicated state alone, chosen afresh after every applied command:
// a replica restored from a snapshot and one that replayed the log hold
// the same GPUs, so a new leader matches as the old one would have.
func (s *Store) holdFor(_ time.Time) *backfill.Hold {
	s.holdMu.Lock()
	defer s.holdMu.Unlock()
	if s.holds.ok && s.holds.version == s.version {
		return s.holds.hold
	}
	var bases *place.Bases // none while views are not kept (workerview.go)
	if !s.views.isOff() {
		bases = &s.bases
	}
	v := s.planView()
	s.holds = holdCache{version: s.version, ok: true, hold: place.Hold(v, place.Head(v), bases)}
	return s.holds.hold
}
