package state

import (
	"fmt"
	"slices"

	"github.com/gpulayer/gpulayer/coordinator/sched/fit"
	"github.com/gpulayer/gpulayer/coordinator/sched/place"
)

// The queue as the scheduler reads it (GET /v1/queue): the teams with
// queued tasks in fair-share order, and each team's queued tasks in the
// order the matcher takes them (higher priority, then older), each with
// its job's pending reason. Tasks held out of the queue (waiting for a
// dependency or under a job's parallelism) are counted by the team's
// usage, not listed here: the matcher does not read them.

// MaxQueueListed bounds the tasks listed per team.
const MaxQueueListed = 1000

// QueuedTask is one task in a team's order.
type QueuedTask struct {
	TaskID   string
	JobID    string
	Priority int
	Gang     bool
	// CentiGPUs is what the task asks for in whole GPUs (a gang: each
	// member), in hundredths; a share or a MIG device counts 1.
	CentiGPUs int64
	Reason    string
}

// TeamQueue is one team's place in the order and its first tasks.
type TeamQueue struct {
	place.Share
	Queued int
	Tasks  []QueuedTask
}

// Queue lists the queue of team (every team when empty), up to limit
// tasks per team (at most MaxQueueListed).
func (s *Store) Queue(team string, limit int) ([]TeamQueue, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if team != "" {
		if _, ok := s.teams.Get(team); !ok {
			return nil, fmt.Errorf("team %s: %w", team, ErrNotFound)
		}
	}
	limit = min(max(limit, 0), MaxQueueListed)
	lists := map[string][][]*Task{}
	for _, sq := range s.queue.All() {
		sk, list := sq.Key, sq.Tasks
		if team == "" || sk.Team == team {
			lists[sk.Team] = append(lists[sk.Team], list)
		}
	}
	names := make([]string, 0, len(lists))
	for name := range lists {
		names = append(names, name)
	}
	slices.SortFunc(names, func(a, b string) int { return place.CompareShare(s.planView(), a, b) })
	reasons := map[string]string{}
	out := make([]TeamQueue, 0, len(names))
	for _, name := range names {
		tq := TeamQueue{Share: place.ShareOf(s.planView(), name)}
		for _, l := range lists[name] {
			tq.Queued += len(l)
		}
		for _, t := range s.mergeFirst(lists[name], limit) {
			j := s.jobs.Get(t.JobID)
			why, ok := reasons[j.ID]
			if !ok {
				why = place.Why(s.planView(), j)
				reasons[j.ID] = why
			}
			per := j.Spec
			per.Gang = false
			tq.Tasks = append(tq.Tasks, QueuedTask{TaskID: t.ID, JobID: j.ID, Priority: j.Spec.Priority, Gang: j.Spec.Gang, CentiGPUs: fit.WholeCenti(per), Reason: why})
		}
		out = append(out, tq)
	}
	return out, nil
}

// mergeFirst takes the first n tasks of sorted lists in queue order.
func (s *Store) mergeFirst(lists [][]*Task, n int) []*Task {
	at := make([]int, len(lists))
	var out []*Task
	for len(out) < n {
		best := -1
		for i, l := range lists {
			if at[i] < len(l) && (best < 0 || s.queue.Less(l[at[i]], lists[best][at[best]])) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		out = append(out, lists[best][at[best]])
		at[best]++
	}
	return out
}
