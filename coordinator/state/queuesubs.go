package state

import "slices"

// Sub-queue lists. The pending queue keeps its sub-queues in maps by
// route and key (queue.go); a match walks every sub-queue of the routes
// a worker reads (teamLists), and choosing the backfill head walks them
// all (head), and walking a map of large keys costs far more than a
// slice. So each route also keeps its sub-queues in a slice, updated as
// tasks are pushed and removed. Its order is the order sub-queues were
// first filled, which may differ between replicas; every reader orders
// what it takes (teams by share, tasks by pendingQueue.less), so the
// order does not reach a decision.

// subQueue is one sub-queue: its key and its tasks (the same slice the
// route's map holds).
type subQueue struct {
	key   subKey
	tasks []*Task
	prio  int // the first task's priority
}

// routeSubs is one route's sub-queues, also by team.
type routeSubs struct {
	byKey  map[subKey]*subQueue
	all    []*subQueue
	byTeam map[string][]*subQueue
}

// setSub records sub-queue k of route rk as tasks (none: gone).
func (q *pendingQueue) setSub(rk routeKey, k subKey, tasks []*Task) {
	rs := q.subs[rk]
	if rs == nil {
		if len(tasks) == 0 {
			return
		}
		rs = &routeSubs{byKey: map[subKey]*subQueue{}, byTeam: map[string][]*subQueue{}}
		if q.subs == nil {
			q.subs = map[routeKey]*routeSubs{}
		}
		q.subs[rk] = rs
	}
	sq := rs.byKey[k]
	switch {
	case len(tasks) > 0 && sq == nil:
		sq = &subQueue{key: k}
		rs.byKey[k] = sq
		rs.all = append(rs.all, sq)
		rs.byTeam[k.team] = append(rs.byTeam[k.team], sq)
		if q.teams == nil {
			q.teams = map[string]int{}
		}
		q.teams[k.team]++
		sq.tasks, sq.prio = tasks, q.prio[tasks[0].ID]
	case len(tasks) > 0:
		sq.tasks, sq.prio = tasks, q.prio[tasks[0].ID]
	case sq != nil:
		delete(rs.byKey, k)
		rs.all = slices.DeleteFunc(rs.all, func(x *subQueue) bool { return x == sq })
		if rs.byTeam[k.team] = slices.DeleteFunc(rs.byTeam[k.team], func(x *subQueue) bool { return x == sq }); len(rs.byTeam[k.team]) == 0 {
			delete(rs.byTeam, k.team)
		}
		if q.teams[k.team]--; q.teams[k.team] == 0 {
			delete(q.teams, k.team)
		}
		if len(rs.all) == 0 {
			delete(q.subs, rk)
		}
	}
}

// teamSubsOf lists route (executor, target)'s sub-queues of team; the
// caller must not change them.
func (q *pendingQueue) teamSubsOf(executor, target, team string) []*subQueue {
	if rs := q.subs[routeKey{executor, target}]; rs != nil {
		return rs.byTeam[team]
	}
	return nil
}
