package cow

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"
)

// A Map behaves as a map, and each frozen view keeps the entries the
// map held when it was frozen, whatever is set or deleted after: random
// operations checked against plain maps, views taken along the way.
func TestCowMapFreezes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	m := New[int]()
	want := map[string]int{}
	type view struct {
		frozen Frozen[int]
		want   map[string]int
	}
	var views []view
	for op := range 20000 {
		k := fmt.Sprintf("k%d", rng.IntN(3000))
		switch r := rng.IntN(100); {
		case r < 55:
			m.Set(k, op)
			want[k] = op
		case r < 85:
			m.Del(k)
			delete(want, k)
		case r < 86:
			views = append(views, view{m.Freeze(), maps.Clone(want)})
		default:
			v, ok := m.Lookup(k)
			if w, wok := want[k]; v != w || ok != wok || m.Get(k) != w || m.Has(k) != wok {
				t.Fatalf("op %d: lookup(%s) = %d, %v; want %d, %v", op, k, v, ok, w, wok)
			}
		}
		if m.Len() != len(want) {
			t.Fatalf("op %d: len %d, want %d", op, m.Len(), len(want))
		}
	}
	if got := maps.Collect(m.All()); !maps.Equal(got, want) {
		t.Fatalf("the live map holds %d entries, want %d", len(got), len(want))
	}
	if len(views) < 100 {
		t.Fatalf("only %d views taken", len(views))
	}
	for i, v := range views {
		got := maps.Collect(v.frozen.All())
		if !maps.Equal(got, v.want) || v.frozen.Len() != len(v.want) {
			t.Fatalf("view %d holds %d entries (len %d), want %d: later writes reached it", i, len(got), v.frozen.Len(), len(v.want))
		}
		for k, w := range v.want {
			if v.frozen.Get(k) != w {
				t.Fatalf("view %d: get(%s) = %d, want %d", i, k, v.frozen.Get(k), w)
			}
		}
	}
}

// Freezing copies no Entry: a view of a large map costs the shard
// pointers, and a write after it copies one shard only.
func TestCowMapFreezeCopiesOneShardPerWrite(t *testing.T) {
	m := New[int]()
	for i := range 100000 {
		m.Set(fmt.Sprint(i), i)
	}
	if n := testing.AllocsPerRun(10, func() { m.Freeze() }); n != 0 {
		t.Fatalf("freeze allocated %.0f times", n)
	}
	f := m.Freeze()
	m.Set("0", -1)
	shared := 0
	for i := range m.shards {
		if m.shards[i] == f.shards[i] {
			shared++
		}
	}
	if shared != nShards-1 {
		t.Fatalf("%d of %d shards still shared after one write, want all but one", shared, nShards)
	}
	if f.Get("0") != 0 || m.Get("0") != -1 {
		t.Fatal("the write reached the view, or missed the map")
	}
}

// BenchmarkCowMapCapture is what a capture costs a table of 100,000
// entries: maps.Clone of a plain map against freezing a Map.
func BenchmarkCowMapCapture(b *testing.B) {
	type record struct{ ID string }
	plain := map[string]*record{}
	cow := New[*record]()
	for i := range 100000 {
		k := fmt.Sprintf("job-%08d-a", i)
		plain[k] = &record{ID: k}
		cow.Set(k, plain[k])
	}
	b.Run("clone", func(b *testing.B) {
		for b.Loop() {
			_ = maps.Clone(plain)
		}
	})
	b.Run("freeze", func(b *testing.B) {
		for b.Loop() {
			_ = cow.Freeze()
		}
	})
}

// A loop over a map may delete or overwrite the entries it is given, also
// right after a freeze (the write copies the shard the loop is in): each
// entry is yielded once, the map ends as the loop left it, and the view
// is unchanged.
func TestCowMapWritesDuringIteration(t *testing.T) {
	for _, frozen := range []bool{false, true} {
		m := New[int]()
		for i := range 5000 {
			m.Set(fmt.Sprint(i), i)
		}
		var view Frozen[int]
		if frozen {
			view = m.Freeze()
		}
		seen := map[string]int{}
		for k, v := range m.All() {
			seen[k]++
			if v%2 == 0 {
				m.Del(k)
			} else {
				m.Set(k, -v)
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
		if m.Len() != 2500 || len(maps.Collect(m.All())) != 2500 {
			t.Fatalf("frozen %v: %d entries left (len %d), want 2500", frozen, len(maps.Collect(m.All())), m.Len())
		}
		for k, v := range m.All() {
			if v >= 0 {
				t.Fatalf("frozen %v: %s = %d, not overwritten", frozen, k, v)
			}
		}
		if frozen && (view.Len() != 5000 || view.Get("2") != 2 || view.Get("3") != 3) {
			t.Fatalf("the view changed under the loop's writes")
		}
	}
}

// Reserve makes room without changing what the map or a frozen view
// holds: the shards it adds are the map's own, the ones in use are left.
func TestCowMapReserve(t *testing.T) {
	m := New[int]()
	m.Set("a", 1)
	before := m.Freeze()
	m.Reserve(10000)
	if m.Len() != 1 || m.Get("a") != 1 {
		t.Fatalf("after Reserve: len %d, a=%d", m.Len(), m.Get("a"))
	}
	for i := range 1000 {
		m.Set(fmt.Sprintf("k%d", i), i)
	}
	m.Set("a", 2)
	if m.Len() != 1001 || before.Len() != 1 || before.Get("a") != 1 || before.Get("k1") != 0 {
		t.Fatalf("len %d, the view's len %d, a=%d, k1 there %v", m.Len(), before.Len(), before.Get("a"), before.Get("k1") != 0)
	}
	if got := maps.Collect(m.All()); len(got) != 1001 || got["a"] != 2 || got["k999"] != 999 {
		t.Fatalf("the map holds %d entries", len(got))
	}
}
