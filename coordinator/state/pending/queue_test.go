package pending

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/state/record"
)

func key(executor, target, team string, size int) Key {
	return Key{Executor: executor, Target: target, Team: team, Size: size}
}

func ids(ts []*record.Task) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.ID
	}
	return out
}

// A sub-queue is in priority order, then submission order, whatever the
// order the tasks were pushed in.
func TestQueueOrdersByPriorityThenSubmission(t *testing.T) {
	q := New()
	k := key("exec", "", "default", 1)
	tasks := map[string]*record.Task{}
	for _, c := range []struct {
		id   string
		seq  uint64
		prio int
	}{{"low-old", 1, 0}, {"high-new", 5, 9}, {"low-new", 3, 0}, {"high-old", 2, 9}} {
		tasks[c.id] = &record.Task{ID: c.id, Seq: c.seq}
		q.Push(k, c.prio, tasks[c.id])
	}
	subs := q.TeamSubsOf(Route{Executor: "exec"}, "default")
	if len(subs) != 1 {
		t.Fatalf("%d sub-queues, want 1", len(subs))
	}
	if got, want := ids(subs[0].Tasks), []string{"high-old", "high-new", "low-old", "low-new"}; !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
	if subs[0].Prio != 9 || !q.Less(tasks["high-new"], tasks["low-old"]) || q.Less(tasks["low-new"], tasks["low-old"]) {
		t.Fatalf("head priority %d, or Less disagrees with the order", subs[0].Prio)
	}
	if p, ok := q.Priority("high-new"); !ok || p != 9 {
		t.Fatalf("Priority: %d %v", p, ok)
	}

	c := *tasks["low-old"]
	q.Replace(k, tasks["low-old"], &c)
	if got := q.TeamSubsOf(Route{Executor: "exec"}, "default")[0].Tasks[2]; got != &c {
		t.Fatal("Replace did not put the copy in the original's place")
	}
	q.Remove(k, &c)
	q.Remove(k, &record.Task{ID: "never-queued", Seq: 4}) // left alone
	if got, want := ids(q.TeamSubsOf(Route{Executor: "exec"}, "default")[0].Tasks), []string{"high-old", "high-new", "low-new"}; !slices.Equal(got, want) || q.Len() != 3 {
		t.Fatalf("after removing one: %v (%d queued), want %v", got, q.Len(), want)
	}
	if _, ok := q.Priority(c.ID); ok {
		t.Fatal("a removed task keeps its priority")
	}
}

// Sub-queues are kept apart by route, team and size, counted by target,
// and gone once empty.
func TestQueueKeepsSubQueuesApart(t *testing.T) {
	q := New()
	push := func(k Key, id string) *record.Task {
		x := &record.Task{ID: id}
		q.Push(k, 0, x)
		return x
	}
	a := push(key("exec", "", "red", 1), "a")
	push(key("exec", "", "blue", 1), "b")
	push(key("exec", "group:g", "red", 1), "c")
	push(key("exec", "", "red", 2), "d")
	push(key("container", "", "red", 1), "e")
	if q.Len() != 5 || q.Targeted("group:g") != 1 || q.Targeted("") != 4 {
		t.Fatalf("len %d, group:g %d, untargeted %d", q.Len(), q.Targeted("group:g"), q.Targeted(""))
	}
	if n := len(q.TeamSubsOf(Route{Executor: "exec"}, "red")); n != 2 {
		t.Fatalf("exec's untargeted red sub-queues: %d, want 2 (one per size)", n)
	}
	teams := slices.Sorted(q.Teams())
	if !slices.Equal(teams, []string{"blue", "red"}) {
		t.Fatalf("teams %v", teams)
	}
	n := 0
	for range q.All() {
		n++
	}
	if n != 5 {
		t.Fatalf("All yielded %d sub-queues, want 5", n)
	}
	q.Remove(key("exec", "", "red", 1), a)
	if n := len(q.TeamSubsOf(Route{Executor: "exec"}, "red")); n != 1 {
		t.Fatalf("an emptied sub-queue stays: %d red sub-queues", n)
	}
	if bad := q.Consistent(); len(bad) > 0 {
		t.Fatal(bad)
	}
}

// Over random pushes, replaces and removes, the sub-queue slices agree
// with the maps, and every sub-queue stays in order.
func TestQueueStaysConsistent(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	q := New()
	type queued struct {
		k Key
		t *record.Task
	}
	var in []queued
	for seq := range uint64(3000) {
		switch op := rng.IntN(10); {
		case op < 5 || len(in) == 0:
			k := key([]string{"exec", "container"}[rng.IntN(2)], []string{"", "worker:w1"}[rng.IntN(2)],
				[]string{"red", "blue", "green"}[rng.IntN(3)], rng.IntN(3))
			x := &record.Task{ID: fmt.Sprint("t", seq), Seq: seq}
			q.Push(k, rng.IntN(3), x)
			in = append(in, queued{k, x})
		case op < 7:
			i := rng.IntN(len(in))
			c := *in[i].t
			q.Replace(in[i].k, in[i].t, &c)
			in[i].t = &c
		default:
			i := rng.IntN(len(in))
			q.Remove(in[i].k, in[i].t)
			in = slices.Delete(in, i, i+1)
		}
		if bad := q.Consistent(); len(bad) > 0 {
			t.Fatalf("step %d: %v", seq, bad)
		}
	}
	if q.Len() != len(in) {
		t.Fatalf("%d queued, want %d", q.Len(), len(in))
	}
	for _, sq := range q.All() {
		if !slices.IsSortedFunc(sq.Tasks, func(a, b *record.Task) int {
			if q.Less(a, b) {
				return -1
			}
			return 1
		}) {
			t.Fatalf("sub-queue %+v out of order", sq.Key)
		}
	}
}
