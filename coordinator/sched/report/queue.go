package report

import (
	"slices"

	"github.com/gpulayer/gpulayer/coordinator/sched/fit"
	"github.com/gpulayer/gpulayer/coordinator/sched/place"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
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
	// CentiGPUs is what the task asks, in hundredths of a GPU.
	CentiGPUs int64
	Reason    string
}

// TeamQueue is one team's share and its queued tasks, in order.
type TeamQueue struct {
	place.Share
	Queued int
	Tasks  []QueuedTask
}

// Queue lists the queue of team (every team with queued tasks for ""),
// at most limit tasks a team (bounded by MaxQueueListed).
func Queue(v place.WhyView, team string, limit int) []TeamQueue {
	limit = min(max(limit, 0), MaxQueueListed)
	lists := map[string][][]*record.Task{}
	for _, sq := range v.Queue().All() {
		if team == "" || sq.Key.Team == team {
			lists[sq.Key.Team] = append(lists[sq.Key.Team], sq.Tasks)
		}
	}
	names := make([]string, 0, len(lists))
	for name := range lists {
		names = append(names, name)
	}
	slices.SortFunc(names, func(a, b string) int { return place.CompareShare(v, a, b) })
	reasons := map[string]string{}
	out := make([]TeamQueue, 0, len(names))
	for _, name := range names {
		tq := TeamQueue{Share: place.ShareOf(v, name)}
		for _, l := range lists[name] {
			tq.Queued += len(l)
		}
		for _, t := range mergeFirst(v, lists[name], limit) {
			j := v.Job(t.JobID)
			why, ok := reasons[j.ID]
			if !ok {
				why = place.Why(v, j)
				reasons[j.ID] = why
			}
			per := j.Spec
			per.Gang = false // what one member asks
			tq.Tasks = append(tq.Tasks, QueuedTask{TaskID: t.ID, JobID: j.ID, Priority: j.Spec.Priority, Gang: j.Spec.Gang, CentiGPUs: fit.WholeCenti(per), Reason: why})
		}
		out = append(out, tq)
	}
	return out
}

// mergeFirst is the first n tasks of lists (each in the queue's order)
// merged in the queue's order.
func mergeFirst(v place.MatchView, lists [][]*record.Task, n int) []*record.Task {
	q := v.Queue()
	at := make([]int, len(lists))
	var out []*record.Task
	for len(out) < n {
		best := -1
		for i, l := range lists {
			if at[i] < len(l) && (best < 0 || q.Less(l[at[i]], lists[best][at[best]])) {
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
