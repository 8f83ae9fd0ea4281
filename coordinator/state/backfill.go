package state

import (
	"time"

	"github.com/gpulayer/gpulayer/coordinator/sched/backfill"
	"github.com/gpulayer/gpulayer/coordinator/sched/fit"
	"github.com/gpulayer/gpulayer/coordinator/sched/place"
)

// Backfill. A pending gang or multi-GPU task at the head of the order
// (the top task of the first team in fair-share order with room for it)
// holds the GPUs it needs as they free up: the devices that fit it and
// free earliest, estimated from the running tasks' timeout_seconds (a
// free device first, then by estimated end, worker id and device order),
// so every leader holds the same ones. Another task may take a held GPU
// only when its own timeout_seconds ends before the last held GPU is
// expected free; one without a timeout, or any while an estimate is
// unknown (a holder runs without a timeout), may not. The hold is chosen
// from the replicated state alone (holdFor), and read by the matcher
// only:
// it is a leader's choice among assignments the state machine would all
// accept.

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
	s.holds = holdCache{version: s.version, ok: true, hold: s.computeHold(s.head())}
	return s.holds.hold
}

// head is the first task of the order whose team has room for it: each
// team's top queued task, teams in fair-share order.
func (s *Store) head() *Task {
	type top struct {
		t    *Task
		prio int
	}
	tops := map[string]top{}
	for _, sq := range s.queue.All() {
		t := sq.Tasks[0]
		if cur, ok := tops[sq.Key.Team]; !ok || sq.Prio > cur.prio || (sq.Prio == cur.prio && t.Seq < cur.t.Seq) {
			tops[sq.Key.Team] = top{t, sq.Prio} // pending.Queue.Less, its first task's priority kept
		}
	}
	teams := make([]string, 0, len(tops))
	for team := range tops {
		teams = append(teams, team)
	}
	for _, team := range place.ByShare(s.planView(), teams) {
		t := tops[team].t
		j := s.jobs.Get(t.JobID)
		if s.checkTeamRoom(j, fit.WholeCenti(j.Spec)) == nil {
			return t
		}
	}
	return nil
}

// computeHold chooses the hold of head t, or nil when there is none, it
// is not large, or the fleet could not hold it even as tasks end.
func (s *Store) computeHold(t *Task) *backfill.Hold {
	if t == nil {
		return nil
	}
	j := s.jobs.Get(t.JobID)
	if !backfill.Large(j.Spec) {
		return nil
	}
	need, per := 1, j.Spec.Resources.GPUs
	if j.Spec.Gang {
		need = j.Spec.Count
	}
	chosen := s.holdChoice(j, per, need) // holdbasis.go
	if chosen == nil {
		return nil
	}
	return backfill.Of(j.ID, need*per, chosen)
}
