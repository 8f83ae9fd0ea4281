// Package pending is the index of the tasks waiting to be placed: a
// queue per sub-queue key, each ordered by priority (high first) then
// submission order. Matching a worker reads only the sub-queues whose
// key that worker satisfies (its executors, the targets it serves, the
// capabilities it takes), team by team, so pending tasks it could never
// run cost nothing. The state (coordinator/state) pushes a task when it
// becomes pending and removes it when it leaves that state, and decides
// every key (its keyOf); the queue holds the state's own records, which
// it never changes.
package pending

import (
	"iter"
	"sort"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
)

// Key names one pending sub-queue: the tasks of one executor, one
// target, one capability and one team, asking for one number of whole
// GPUs (or for shares or MIG devices), so that a match passes over at no
// cost the GPU sub-queues of a team with no room left and those asking
// for more whole GPUs than the worker has free.
type Key struct {
	Executor   string
	Target     string // "", "worker:<id>" or "group:<id>" (TargetKey)
	Capability string // "" for tasks that need none
	Team       string
	Size       int  // the whole GPUs each task asks for (0: none)
	Partial    bool // the tasks ask for a share or MIG devices
	// Res is what each task asks for, in full: a sub-queue's tasks all
	// ask the same, so a device choice that fails for one fails for all.
	Res command.Resources
}

// SubKey is a queue key within one route.
type SubKey struct {
	Capability string
	Team       string
	Size       int
	Partial    bool
	Res        command.Resources
}

// Route is a queue key without its capability and what follows: the
// executor and target a worker serves.
type Route struct {
	Executor string
	Target   string
}

// TargetKey renders a job target as a queue key component.
func TargetKey(t *command.Target) string {
	if t == nil {
		return ""
	}
	return t.Kind + ":" + t.ID
}

func (k Key) sub() SubKey {
	return SubKey{Capability: k.Capability, Team: k.Team, Size: k.Size, Partial: k.Partial, Res: k.Res}
}

// Queue orders pending tasks by priority (high first) then
// submission order, in sub-queues keyed by executor, target, capability
// and team.
type Queue struct {
	lists    map[Route]map[SubKey][]*record.Task
	subs     map[Route]*routeSubs // the same sub-queues, as slices (subs.go)
	teams    map[string]int       // the sub-queues of each team with any
	prio     map[string]int
	byTarget map[string]int // pending tasks per target key
	n        int
}

// New returns an empty queue.
func New() *Queue {
	return &Queue{lists: map[Route]map[SubKey][]*record.Task{}, prio: map[string]int{}, byTarget: map[string]int{}}
}

// Less orders two queued tasks: the higher priority first, then the
// earlier submitted.
func (q *Queue) Less(a, b *record.Task) bool {
	pa, pb := q.prio[a.ID], q.prio[b.ID]
	if pa != pb {
		return pa > pb
	}
	return a.Seq < b.Seq
}

// Push queues t under k with priority.
func (q *Queue) Push(k Key, priority int, t *record.Task) {
	q.prio[t.ID] = priority
	rk := Route{k.Executor, k.Target}
	byCap := q.lists[rk]
	if byCap == nil {
		byCap = map[SubKey][]*record.Task{}
		q.lists[rk] = byCap
	}
	list := byCap[k.sub()]
	i := sort.Search(len(list), func(i int) bool { return q.Less(t, list[i]) })
	list = append(list, nil)
	copy(list[i+1:], list[i:])
	list[i] = t
	byCap[k.sub()] = list
	q.setSub(rk, k.sub(), list)
	q.byTarget[k.Target]++
	q.n++
}

// Remove takes t, queued under k, out of the queue; a task not queued
// (a pending task the state holds out of it) is left alone.
func (q *Queue) Remove(k Key, t *record.Task) {
	if _, queued := q.prio[t.ID]; !queued {
		return
	}
	rk := Route{k.Executor, k.Target}
	byCap := q.lists[rk]
	list := byCap[k.sub()]
	i := sort.Search(len(list), func(i int) bool { return !q.Less(list[i], t) })
	for ; i < len(list); i++ {
		if list[i] == t {
			copy(list[i:], list[i+1:])
			list[len(list)-1] = nil
			list = list[:len(list)-1]
			q.byTarget[k.Target]--
			if q.byTarget[k.Target] == 0 {
				delete(q.byTarget, k.Target)
			}
			q.n--
			break
		}
	}
	q.setSub(rk, k.sub(), list)
	switch {
	case len(list) > 0:
		byCap[k.sub()] = list
	case byCap != nil:
		delete(byCap, k.sub())
		if len(byCap) == 0 {
			delete(q.lists, rk)
		}
	}
	delete(q.prio, t.ID)
}

// Replace puts c, a copy of the queued t the state made to change, in
// t's place.
func (q *Queue) Replace(k Key, t, c *record.Task) {
	if _, queued := q.prio[t.ID]; !queued {
		return
	}
	list := q.lists[Route{k.Executor, k.Target}][k.sub()]
	i := sort.Search(len(list), func(i int) bool { return !q.Less(list[i], t) })
	for ; i < len(list); i++ {
		if list[i] == t {
			list[i] = c
			return
		}
	}
}

// Targeted reports how many pending tasks wait for target key tk.
func (q *Queue) Targeted(tk string) int { return q.byTarget[tk] }

// Len is how many tasks are queued.
func (q *Queue) Len() int { return q.n }

// Priority is the priority task id was queued with; false when it is not
// queued.
func (q *Queue) Priority(id string) (int, bool) {
	p, ok := q.prio[id]
	return p, ok
}

// All yields every sub-queue with its route, in no order; the caller
// must not change them.
func (q *Queue) All() iter.Seq2[Route, *Sub] {
	return func(yield func(Route, *Sub) bool) {
		for rk, rs := range q.subs {
			for _, sq := range rs.all {
				if !yield(rk, sq) {
					return
				}
			}
		}
	}
}

// Teams yields the teams with a queued task, in no order.
func (q *Queue) Teams() iter.Seq[string] {
	return func(yield func(string) bool) {
		for team := range q.teams {
			if !yield(team) {
				return
			}
		}
	}
}
