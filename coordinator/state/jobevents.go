package state

import (
	"fmt"

	"github.com/gpulayer/gpulayer/coordinator/state/jobhistory"
)

// JobEvents lists job id's events, oldest first, at most
// jobhistory.MaxJobEvents (the latest; truncated says whether older ones
// were left out): its history, derived from its records by package
// jobhistory.
func (s *Store) JobEvents(id string) (events []jobhistory.JobEvent, truncated bool, err error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	j, ok := s.jobs.Lookup(id)
	if !ok {
		return nil, false, fmt.Errorf("job %s: %w", id, ErrNotFound)
	}
	tasks := make([]*Task, len(j.TaskIDs))
	for i, tid := range j.TaskIDs {
		tasks[i] = s.tasks.Get(tid)
	}
	events, truncated = jobhistory.Of(j, tasks)
	return events, truncated, nil
}
