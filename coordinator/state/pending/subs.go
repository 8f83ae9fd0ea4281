package pending

import (
	"fmt"
	"maps"
	"slices"

	"github.com/gpulayer/gpulayer/coordinator/state/record"
)

// Sub-queue lists. The queue keeps its sub-queues in maps by route and
// key (queue.go); a match walks every sub-queue of the routes a worker
// reads (TeamSubsOf), and choosing the backfill head walks them all
// (All), and walking a map of large keys costs far more than a slice.
// So each route also keeps its sub-queues in a slice, updated as tasks
// are pushed and removed. Its order is the order sub-queues were
// first filled, which may differ between replicas; every reader orders
// what it takes (teams by share, tasks by Queue.Less), so the
// order does not reach a decision.

// Sub is one sub-queue: its key and its tasks (the same slice the
// route's map holds), in order. Readers must not change it.
type Sub struct {
	Key   SubKey
	Tasks []*record.Task
	Prio  int // the first task's priority
}

// routeSubs is one route's sub-queues, also by team.
type routeSubs struct {
	byKey  map[SubKey]*Sub
	all    []*Sub
	byTeam map[string][]*Sub
}

// setSub records sub-queue k of route rk as tasks (none: gone).
func (q *Queue) setSub(rk Route, k SubKey, tasks []*record.Task) {
	rs := q.subs[rk]
	if rs == nil {
		if len(tasks) == 0 {
			return
		}
		rs = &routeSubs{byKey: map[SubKey]*Sub{}, byTeam: map[string][]*Sub{}}
		if q.subs == nil {
			q.subs = map[Route]*routeSubs{}
		}
		q.subs[rk] = rs
	}
	sq := rs.byKey[k]
	switch {
	case len(tasks) > 0 && sq == nil:
		sq = &Sub{Key: k}
		rs.byKey[k] = sq
		rs.all = append(rs.all, sq)
		rs.byTeam[k.Team] = append(rs.byTeam[k.Team], sq)
		if q.teams == nil {
			q.teams = map[string]int{}
		}
		q.teams[k.Team]++
		sq.Tasks, sq.Prio = tasks, q.prio[tasks[0].ID]
	case len(tasks) > 0:
		sq.Tasks, sq.Prio = tasks, q.prio[tasks[0].ID]
	case sq != nil:
		delete(rs.byKey, k)
		rs.all = slices.DeleteFunc(rs.all, func(x *Sub) bool { return x == sq })
		if rs.byTeam[k.Team] = slices.DeleteFunc(rs.byTeam[k.Team], func(x *Sub) bool { return x == sq }); len(rs.byTeam[k.Team]) == 0 {
			delete(rs.byTeam, k.Team)
		}
		if q.teams[k.Team]--; q.teams[k.Team] == 0 {
			delete(q.teams, k.Team)
		}
		if len(rs.all) == 0 {
			delete(q.subs, rk)
		}
	}
}

// TeamSubsOf lists route r's sub-queues of team; the caller must not
// change them.
func (q *Queue) TeamSubsOf(r Route, team string) []*Sub {
	if rs := q.subs[r]; rs != nil {
		return rs.byTeam[team]
	}
	return nil
}

// Consistent lists where the queue's sub-queue slices differ from its
// maps, or its counts from its sub-queues: nothing, ever. It walks the
// whole queue; the state's tests call it after every command of random
// histories.
func (q *Queue) Consistent() []string {
	var bad []string
	n := 0
	for rk, byKey := range q.lists {
		for k, list := range byKey {
			rs := q.subs[rk]
			if rs == nil || rs.byKey[k] == nil || !slices.Equal(rs.byKey[k].Tasks, list) {
				bad = append(bad, fmt.Sprintf("sub-queue %+v %+v: %d tasks in the map, not the same in the slices", rk, k, len(list)))
			}
			n++
		}
	}
	teams := map[string]int{}
	for rk, rs := range q.subs {
		byTeam := 0
		for team, l := range rs.byTeam {
			byTeam += len(l)
			teams[team] += len(l)
		}
		if len(rs.all) != len(rs.byKey) || len(rs.all) != byTeam {
			bad = append(bad, fmt.Sprintf("route %+v: %d sub-queues listed, %d by key, %d by team", rk, len(rs.all), len(rs.byKey), byTeam))
		}
		n -= len(rs.all)
	}
	if !maps.Equal(teams, q.teams) {
		bad = append(bad, fmt.Sprintf("sub-queues by team %v, counted %v", teams, q.teams))
	}
	if n != 0 {
		bad = append(bad, fmt.Sprintf("%d more sub-queues in the maps than in the slices", n))
	}
	return bad
}
