// Package cow is the state's copy-on-write table: a string-keyed map a
// snapshot's capture freezes in constant time while commands go on
// writing it. It knows no record type and no other room.
package cow

import (
	"hash/maphash"
	"iter"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
)

// A snapshot's capture must not copy the large tables (tasks, jobs,
// remembered finishes, idempotency keys: one entry per task or job ever
// kept), because it runs where no command applies: copying 100,000
// entries took 10-20 ms, and a capture that allocated that much while the
// garbage collector was marking was charged with marking too and held
// the store's locks for over 100 ms (S7).
//
// Map is a string-keyed map split into shards, each a plain map. A
// capture freezes it (Freeze): it copies the shard pointers, 256 of them,
// and moves the map's generation on. A write to a shard that was last
// copied in an older generation, and so may be shared with a frozen view,
// copies that shard first (a few hundred entries), then writes the copy.
// The frozen view never changes; the live map goes on.
//
// Its methods follow the store's locking: reads under the read lock,
// writes under the write lock; Freeze under the read lock, concurrently
// with reads and other freezes (the generation is atomic, the shard
// pointers are only read).

// nShards is the number of shards: a capture copies this many pointers,
// and the first write to each shard after a capture copies that shard.
const nShards = 256

type shard[V any] struct {
	gen uint64 // the map's generation when this shard was made
	m   map[string]V
}

// Map is a map that can be frozen in O(nShards) (see above).
type Map[V any] struct {
	seed   maphash.Seed
	gen    atomic.Uint64
	n      int
	shards [nShards]*shard[V]
}

func New[V any]() *Map[V] {
	return &Map[V]{seed: maphash.MakeSeed()}
}

func (m *Map[V]) shardOf(k string) int { return shardOf(m.seed, k) }

// shardOf is the shard that holds key k under seed.
func shardOf(seed maphash.Seed, k string) int {
	return int(maphash.String(seed, k) % nShards)
}

// Get returns k's value, or V's zero value.
func (m *Map[V]) Get(k string) V {
	v, _ := m.Lookup(k)
	return v
}

// Lookup returns k's value and whether k is present.
func (m *Map[V]) Lookup(k string) (V, bool) {
	sh := m.shards[m.shardOf(k)]
	if sh == nil {
		var zero V
		return zero, false
	}
	v, ok := sh.m[k]
	return v, ok
}

// Has reports whether k is present.
func (m *Map[V]) Has(k string) bool {
	_, ok := m.Lookup(k)
	return ok
}

// own returns shard i's map to write: a copy when a frozen view may share
// the shard.
func (m *Map[V]) own(i int) map[string]V {
	gen := m.gen.Load()
	sh := m.shards[i]
	switch {
	case sh == nil:
		sh = &shard[V]{gen: gen, m: map[string]V{}}
		m.shards[i] = sh
	case sh.gen != gen:
		sh = &shard[V]{gen: gen, m: maps.Clone(sh.m)}
		m.shards[i] = sh
	}
	return sh.m
}

// Reserve makes room for about n entries in all, spread over the
// shards, so that a table filled at once (a restore) does not grow its
// shards step by step. Shards that hold entries already are left as they
// are.
func (m *Map[V]) Reserve(n int) {
	per := n/nShards + n/(nShards*8) + 1 // the shards' sizes spread a little
	gen := m.gen.Load()
	for i, sh := range m.shards {
		if sh == nil {
			m.shards[i] = &shard[V]{gen: gen, m: make(map[string]V, per)}
		}
	}
}

// Set puts v under k.
func (m *Map[V]) Set(k string, v V) {
	sm := m.own(m.shardOf(k))
	if _, ok := sm[k]; !ok {
		m.n++
	}
	sm[k] = v
}

// Del removes k.
func (m *Map[V]) Del(k string) {
	i := m.shardOf(k)
	if sh := m.shards[i]; sh == nil {
		return
	} else if _, ok := sh.m[k]; !ok {
		return
	}
	delete(m.own(i), k)
	m.n--
}

// Len returns the number of entries.
func (m *Map[V]) Len() int { return m.n }

// All yields every entry, in no set order, each once. The loop may
// delete or overwrite entries as it goes (a shard a frozen view shares
// is copied by the write, and the loop goes on over the old one), as a
// range over a plain map may; an Entry it adds may or may not be yielded.
func (m *Map[V]) All() iter.Seq2[string, V] {
	return allOf(&m.shards)
}

// Freeze returns a view of the map as it stands now, which later writes
// do not change.
func (m *Map[V]) Freeze() Frozen[V] {
	f := Frozen[V]{seed: m.seed, n: m.n, shards: m.shards}
	m.gen.Add(1)
	return f
}

// Frozen is a Map as it stood when it was frozen; read only.
type Frozen[V any] struct {
	seed   maphash.Seed
	n      int
	shards [nShards]*shard[V]
}

// Get returns k's value, or V's zero value.
func (f *Frozen[V]) Get(k string) V {
	if sh := f.shards[shardOf(f.seed, k)]; sh != nil {
		return sh.m[k]
	}
	var zero V
	return zero
}

// Len returns the number of entries.
func (f *Frozen[V]) Len() int { return f.n }

// All yields every entry, in no set order.
func (f *Frozen[V]) All() iter.Seq2[string, V] { return allOf(&f.shards) }

// Entry is one key and its value.
type Entry[V any] struct {
	Key   string
	Value V
}

// Sorted returns every entry, sorted by key, in one allocation: a
// snapshot writes the large tables in key order, and collecting the keys
// by appending, then looking each value up again, cost it tens of MB of
// garbage and a hash lookup a key.
func (f *Frozen[V]) Sorted() []Entry[V] {
	out := make([]Entry[V], 0, f.n)
	for k, v := range f.All() {
		out = append(out, Entry[V]{k, v})
	}
	slices.SortFunc(out, func(a, b Entry[V]) int { return strings.Compare(a.Key, b.Key) })
	return out
}

func allOf[V any](shards *[nShards]*shard[V]) iter.Seq2[string, V] {
	return func(yield func(string, V) bool) {
		for _, sh := range shards {
			if sh == nil {
				continue
			}
			for k, v := range sh.m {
				if !yield(k, v) {
					return
				}
			}
		}
	}
}
