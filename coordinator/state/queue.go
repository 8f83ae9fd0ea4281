package state

import (
	"sort"

	"github.com/gpulayer/gpulayer/coordinator/command"
)

// queueKey names one pending sub-queue: the tasks of one executor, one
// target, one capability and one team, asking for one number of whole
// GPUs (or for shares or MIG devices). Matching a
// worker reads only the sub-queues whose key that worker satisfies, so
// pending tasks it could never run (another executor, another target, a
// capability it lacks) cost nothing, and it reads them team by team in
// fair-share order (fairshare.go), passing over at no cost the GPU
// sub-queues of a team with no room left (teamroom.go) and those asking
// for more whole GPUs than the worker has free.
type queueKey struct {
	executor   string
	target     string // "", "worker:<id>" or "group:<id>"
	capability string // "" for tasks that need none
	team       string
	size       int  // the whole GPUs each task asks for (0: none)
	partial    bool // the tasks ask for a share or MIG devices
	// res is what each task asks for, in full: a sub-queue's tasks all
	// ask the same, so a device choice that fails for one fails for all.
	res command.Resources
}

// subKey is a queue key within one route.
type subKey struct {
	capability string
	team       string
	size       int
	partial    bool
	res        command.Resources
}

// routeKey is a queue key without its capability.
type routeKey struct {
	executor string
	target   string
}

// targetKey renders a job target as a queue key component.
func targetKey(t *command.Target) string {
	if t == nil {
		return ""
	}
	return t.Kind + ":" + t.ID
}

// keyOf is the sub-queue a job's pending tasks wait in.
func keyOf(j *Job) queueKey {
	spec := j.Spec
	k := queueKey{executor: spec.Executor, target: targetKey(spec.Target), capability: spec.Capability, team: command.TeamOf(j.Team), res: resourcesOf(spec)}
	if r := spec.Resources; r != nil && r.GPUs > 0 {
		k.partial = r.Shared() || r.MIGProfile != ""
		if !k.partial {
			k.size = r.GPUs
		}
	}
	return k
}

func (k queueKey) sub() subKey {
	return subKey{capability: k.capability, team: k.team, size: k.size, partial: k.partial, res: k.res}
}

// pendingQueue orders pending tasks by priority (high first) then
// submission order, in sub-queues keyed by executor, target, capability
// and team.
type pendingQueue struct {
	lists    map[routeKey]map[subKey][]*Task
	subs     map[routeKey]*routeSubs // the same sub-queues, as slices (queuesubs.go)
	teams    map[string]int          // the sub-queues of each team with any
	prio     map[string]int
	byTarget map[string]int // pending tasks per target key
	n        int
}

func newPendingQueue() *pendingQueue {
	return &pendingQueue{lists: map[routeKey]map[subKey][]*Task{}, prio: map[string]int{}, byTarget: map[string]int{}}
}

func (q *pendingQueue) less(a, b *Task) bool {
	pa, pb := q.prio[a.ID], q.prio[b.ID]
	if pa != pb {
		return pa > pb
	}
	return a.Seq < b.Seq
}

func (q *pendingQueue) push(k queueKey, priority int, t *Task) {
	q.prio[t.ID] = priority
	rk := routeKey{k.executor, k.target}
	byCap := q.lists[rk]
	if byCap == nil {
		byCap = map[subKey][]*Task{}
		q.lists[rk] = byCap
	}
	list := byCap[k.sub()]
	i := sort.Search(len(list), func(i int) bool { return q.less(t, list[i]) })
	list = append(list, nil)
	copy(list[i+1:], list[i:])
	list[i] = t
	byCap[k.sub()] = list
	q.setSub(rk, k.sub(), list)
	q.byTarget[k.target]++
	q.n++
}

func (q *pendingQueue) remove(k queueKey, t *Task) {
	if _, queued := q.prio[t.ID]; !queued {
		return // a pending task held out of the queue (dependencies.go)
	}
	rk := routeKey{k.executor, k.target}
	byCap := q.lists[rk]
	list := byCap[k.sub()]
	i := sort.Search(len(list), func(i int) bool { return !q.less(list[i], t) })
	for ; i < len(list); i++ {
		if list[i] == t {
			copy(list[i:], list[i+1:])
			list[len(list)-1] = nil
			list = list[:len(list)-1]
			q.byTarget[k.target]--
			if q.byTarget[k.target] == 0 {
				delete(q.byTarget, k.target)
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

// replace puts t's copy c in t's place (ownTask).
func (q *pendingQueue) replace(k queueKey, t, c *Task) {
	if _, queued := q.prio[t.ID]; !queued {
		return
	}
	list := q.lists[routeKey{k.executor, k.target}][k.sub()]
	i := sort.Search(len(list), func(i int) bool { return !q.less(list[i], t) })
	for ; i < len(list); i++ {
		if list[i] == t {
			list[i] = c
			return
		}
	}
}

// targeted reports how many pending tasks wait for target key tk.
func (q *pendingQueue) targeted(tk string) int { return q.byTarget[tk] }

func (q *pendingQueue) len() int { return q.n }
