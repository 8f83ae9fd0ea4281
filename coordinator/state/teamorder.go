package state

import (
	"slices"
	"sync"

	"github.com/gpulayer/gpulayer/coordinator/state/pending"
)

// Team order. A match reads the teams in fair-share order and stops at
// the first with a task that fits the worker (match.go), so it takes
// each team's sub-queues as it comes to the team, not every team's
// first. The order of the teams with queued work is a function of the
// state; it is sorted once per state version and shared by the matches
// of that version.

// teamOrderCache keeps the order of one state version.
type teamOrderCache struct {
	mu      sync.Mutex
	version uint64
	ok      bool
	teams   []string
}

// teamOrder lists the teams with queued sub-queues, lowest share first;
// the caller must not change it.
func (s *Store) teamOrder() []string {
	c := &s.order
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ok && c.version == s.version {
		return c.teams
	}
	teams := s.sortByShare(slices.Collect(s.queue.Teams()))
	c.version, c.ok, c.teams = s.version, true, teams
	return teams
}

// listsOf gathers team's sub-queues worker w could take from (its
// executors x targets x the capabilities it accepts) with what it has
// free now (room), into buf.
func (s *Store) listsOf(team string, w *Worker, targets, caps []string, anyCap bool, room deviceRoom, buf []teamList) []teamList {
	buf = buf[:0]
	for _, ex := range w.Executors {
		for _, tk := range targets {
			for _, sq := range s.queue.TeamSubsOf(pending.Route{Executor: ex, Target: tk}, team) {
				if (!anyCap && !slices.Contains(caps, sq.Key.Capability)) || !room.admits(sq.Key) {
					continue
				}
				buf = append(buf, teamList{size: sq.Key.Size, partial: sq.Key.Partial, tasks: sq.Tasks})
			}
		}
	}
	return buf
}
