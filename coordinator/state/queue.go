package state

import "sort"

// pendingQueue orders pending tasks per executor by priority (high first)
// then submission order, so acquire looks only at tasks it could run.
type pendingQueue struct {
	byExecutor map[string][]*Task
	prio       map[string]int
}

func newPendingQueue() *pendingQueue {
	return &pendingQueue{byExecutor: map[string][]*Task{}, prio: map[string]int{}}
}

func (q *pendingQueue) less(a, b *Task) bool {
	pa, pb := q.prio[a.ID], q.prio[b.ID]
	if pa != pb {
		return pa > pb
	}
	return a.Seq < b.Seq
}

func (q *pendingQueue) push(executor string, priority int, t *Task) {
	q.prio[t.ID] = priority
	list := q.byExecutor[executor]
	i := sort.Search(len(list), func(i int) bool { return q.less(t, list[i]) })
	list = append(list, nil)
	copy(list[i+1:], list[i:])
	list[i] = t
	q.byExecutor[executor] = list
}

func (q *pendingQueue) remove(executor string, t *Task) {
	list := q.byExecutor[executor]
	i := sort.Search(len(list), func(i int) bool { return !q.less(list[i], t) })
	for ; i < len(list); i++ {
		if list[i] == t {
			copy(list[i:], list[i+1:])
			list[len(list)-1] = nil
			list = list[:len(list)-1]
			break
		}
	}
	if len(list) == 0 {
		delete(q.byExecutor, executor)
	} else {
		q.byExecutor[executor] = list
	}
	delete(q.prio, t.ID)
}

// each calls fn over the pending tasks of executor in order until fn
// returns false.
func (q *pendingQueue) each(executor string, fn func(*Task) bool) {
	for _, t := range q.byExecutor[executor] {
		if !fn(t) {
			return
		}
	}
}

func (q *pendingQueue) len() int {
	n := 0
	for _, l := range q.byExecutor {
		n += len(l)
	}
	return n
}
