package state

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"
)

// A cowMap behaves as a map, and each frozen view keeps the entries the
// map held when it was frozen, whatever is set or deleted after: random
// operations checked against plain maps, views taken along the way.
func TestCowMapFreezes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	m := newCowMap[int]()
	want := map[string]int{}
	type view struct {
		frozen frozenMap[int]
		want   map[string]int
	}
	var views []view
	for op := range 20000 {
		k := fmt.Sprintf("k%d", rng.IntN(3000))
		switch r := rng.IntN(100); {
		case r < 55:
			m.set(k, op)
			want[k] = op
		case r < 85:
			m.del(k)
			delete(want, k)
		case r < 86:
			views = append(views, view{m.freeze(), maps.Clone(want)})
		default:
			v, ok := m.lookup(k)
			if w, wok := want[k]; v != w || ok != wok || m.get(k) != w || m.has(k) != wok {
				t.Fatalf("op %d: lookup(%s) = %d, %v; want %d, %v", op, k, v, ok, w, wok)
			}
		}
		if m.len() != len(want) {
			t.Fatalf("op %d: len %d, want %d", op, m.len(), len(want))
		}
	}
	if got := maps.Collect(m.all()); !maps.Equal(got, want) {
		t.Fatalf("the live map holds %d entries, want %d", len(got), len(want))
	}
	if len(views) < 100 {
		t.Fatalf("only %d views taken", len(views))
	}
	for i, v := range views {
		got := maps.Collect(v.frozen.all())
		if !maps.Equal(got, v.want) || v.frozen.len() != len(v.want) {
			t.Fatalf("view %d holds %d entries (len %d), want %d: later writes reached it", i, len(got), v.frozen.len(), len(v.want))
		}
		for k, w := range v.want {
			if v.frozen.get(k) != w {
				t.Fatalf("view %d: get(%s) = %d, want %d", i, k, v.frozen.get(k), w)
			}
		}
	}
}

// Freezing copies no entry: a view of a large map costs the shard
// pointers, and a write after it copies one shard only.
func TestCowMapFreezeCopiesOneShardPerWrite(t *testing.T) {
	m := newCowMap[int]()
	for i := range 100000 {
		m.set(fmt.Sprint(i), i)
	}
	if n := testing.AllocsPerRun(10, func() { m.freeze() }); n != 0 {
		t.Fatalf("freeze allocated %.0f times", n)
	}
	f := m.freeze()
	m.set("0", -1)
	shared := 0
	for i := range m.shards {
		if m.shards[i] == f.shards[i] {
			shared++
		}
	}
	if shared != cowShards-1 {
		t.Fatalf("%d of %d shards still shared after one write, want all but one", shared, cowShards)
	}
	if f.get("0") != 0 || m.get("0") != -1 {
		t.Fatal("the write reached the view, or missed the map")
	}
}

// BenchmarkCowMapCapture is what a capture costs a table of 100,000
// entries: maps.Clone of a plain map against freezing a cowMap.
func BenchmarkCowMapCapture(b *testing.B) {
	plain := map[string]*Task{}
	cow := newCowMap[*Task]()
	for i := range 100000 {
		k := fmt.Sprintf("job-%08d-a", i)
		plain[k] = &Task{ID: k}
		cow.set(k, plain[k])
	}
	b.Run("clone", func(b *testing.B) {
		for b.Loop() {
			_ = maps.Clone(plain)
		}
	})
	b.Run("freeze", func(b *testing.B) {
		for b.Loop() {
			_ = cow.freeze()
		}
	})
}

// A loop over a map may delete or overwrite the entries it is given, also
// right after a freeze (the write copies the shard the loop is in): each
// entry is yielded once, the map ends as the loop left it, and the view
// is unchanged.
func TestCowMapWritesDuringIteration(t *testing.T) {
	for _, frozen := range []bool{false, true} {
		m := newCowMap[int]()
		for i := range 5000 {
			m.set(fmt.Sprint(i), i)
		}
		var view frozenMap[int]
		if frozen {
			view = m.freeze()
		}
		seen := map[string]int{}
		for k, v := range m.all() {
			seen[k]++
			if v%2 == 0 {
				m.del(k)
			} else {
				m.set(k, -v)
			}
		}
		if len(seen) != 5000 {
			t.Fatalf("frozen %v: %d keys yielded, want 5000", frozen, len(seen))
		}
		for k, n := range seen {
			if n != 1 {
				t.Fatalf("frozen %v: %s yielded %d times", frozen, k, n)
			}
		}
		if m.len() != 2500 || len(maps.Collect(m.all())) != 2500 {
			t.Fatalf("frozen %v: %d entries left (len %d), want 2500", frozen, len(maps.Collect(m.all())), m.len())
		}
		for k, v := range m.all() {
			if v >= 0 {
				t.Fatalf("frozen %v: %s = %d, not overwritten", frozen, k, v)
			}
		}
		if frozen && (view.len() != 5000 || view.get("2") != 2 || view.get("3") != 3) {
			t.Fatalf("the view changed under the loop's writes")
		}
	}
}
