package state

import (
	"fmt"

	"github.com/gpulayer/gpulayer/coordinator/sched/report"
)

// The queue as the scheduler reads it (GET /v1/queue) is report.Queue's,
// read under the store's lock.

// MaxQueueListed bounds the tasks listed per team.
const MaxQueueListed = report.MaxQueueListed

// QueuedTask is one task in a team's order (report.QueuedTask).
type QueuedTask = report.QueuedTask

// TeamQueue is one team's share and its queued tasks (report.TeamQueue).
type TeamQueue = report.TeamQueue

// Queue lists the queue of team (every team's for ""; ErrNotFound for a
// team that does not exist), at most limit tasks a team (report.Queue).
func (s *Store) Queue(team string, limit int) ([]TeamQueue, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if team != "" {
		if _, ok := s.teams.Get(team); !ok {
			return nil, fmt.Errorf("team %s: %w", team, ErrNotFound)
		}
	}
	return report.Queue(s.planView(), team, limit), nil
}
