package state

import (
	"slices"
	"sync"

	"github.com/gpulayer/gpulayer/coordinator/sched/place"
)

// Team order. A match reads the teams in fair-share order and stops at
// the first with a task that fits the worker (place.Match), so it takes
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
	teams := place.ByShare(s.planView(), slices.Collect(s.queue.Teams()))
	c.version, c.ok, c.teams = s.version, true, teams
	return teams
}
