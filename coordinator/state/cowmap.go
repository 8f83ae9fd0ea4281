package state

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
// cowMap is a string-keyed map split into shards, each a plain map. A
// capture freezes it (freeze): it copies the shard pointers, 256 of them,
// and moves the map's generation on. A write to a shard that was last
// copied in an older generation, and so may be shared with a frozen view,
// copies that shard first (a few hundred entries), then writes the copy.
// The frozen view never changes; the live map goes on.
//
// Its methods follow the store's locking: reads under the read lock,
// writes under the write lock; freeze under the read lock, concurrently
// with reads and other freezes (the generation is atomic, the shard
// pointers are only read).

// cowShards is the number of shards: a capture copies this many pointers,
// and the first write to each shard after a capture copies that shard.
const cowShards = 256

type cowShard[V any] struct {
	gen uint64 // the map's generation when this shard was made
	m   map[string]V
}

// cowMap is a map that can be frozen in O(cowShards) (see above).
type cowMap[V any] struct {
	seed   maphash.Seed
	gen    atomic.Uint64
	n      int
	shards [cowShards]*cowShard[V]
}

func newCowMap[V any]() *cowMap[V] {
	return &cowMap[V]{seed: maphash.MakeSeed()}
}

func (m *cowMap[V]) shardOf(k string) int { return shardOf(m.seed, k) }

// shardOf is the shard that holds key k under seed.
func shardOf(seed maphash.Seed, k string) int {
	return int(maphash.String(seed, k) % cowShards)
}

// get returns k's value, or V's zero value.
func (m *cowMap[V]) get(k string) V {
	v, _ := m.lookup(k)
	return v
}

// lookup returns k's value and whether k is present.
func (m *cowMap[V]) lookup(k string) (V, bool) {
	sh := m.shards[m.shardOf(k)]
	if sh == nil {
		var zero V
		return zero, false
	}
	v, ok := sh.m[k]
	return v, ok
}

// has reports whether k is present.
func (m *cowMap[V]) has(k string) bool {
	_, ok := m.lookup(k)
	return ok
}

// own returns shard i's map to write: a copy when a frozen view may share
// the shard.
func (m *cowMap[V]) own(i int) map[string]V {
	gen := m.gen.Load()
	sh := m.shards[i]
	switch {
	case sh == nil:
		sh = &cowShard[V]{gen: gen, m: map[string]V{}}
		m.shards[i] = sh
	case sh.gen != gen:
		sh = &cowShard[V]{gen: gen, m: maps.Clone(sh.m)}
		m.shards[i] = sh
	}
	return sh.m
}

// set puts v under k.
func (m *cowMap[V]) set(k string, v V) {
	sm := m.own(m.shardOf(k))
	if _, ok := sm[k]; !ok {
		m.n++
	}
	sm[k] = v
}

// del removes k.
func (m *cowMap[V]) del(k string) {
	i := m.shardOf(k)
	if sh := m.shards[i]; sh == nil {
		return
	} else if _, ok := sh.m[k]; !ok {
		return
	}
	delete(m.own(i), k)
	m.n--
}

// len returns the number of entries.
func (m *cowMap[V]) len() int { return m.n }

// all yields every entry, in no set order, each once. The loop may
// delete or overwrite entries as it goes (a shard a frozen view shares
// is copied by the write, and the loop goes on over the old one), as a
// range over a plain map may; an entry it adds may or may not be yielded.
func (m *cowMap[V]) all() iter.Seq2[string, V] {
	return allOf(&m.shards)
}

// freezeTables moves the large tables' generations on, as a capture
// does, without keeping the views (checkOwnership).
func (t *tables) freezeTables() {
	t.jobs.freeze()
	t.tasks.freeze()
	t.submissions.freeze()
	t.idempotency.freeze()
}

// freeze returns a view of the map as it stands now, which later writes
// do not change.
func (m *cowMap[V]) freeze() frozenMap[V] {
	f := frozenMap[V]{seed: m.seed, n: m.n, shards: m.shards}
	m.gen.Add(1)
	return f
}

// frozenMap is a cowMap as it stood when it was frozen; read only.
type frozenMap[V any] struct {
	seed   maphash.Seed
	n      int
	shards [cowShards]*cowShard[V]
}

// get returns k's value, or V's zero value.
func (f *frozenMap[V]) get(k string) V {
	if sh := f.shards[shardOf(f.seed, k)]; sh != nil {
		return sh.m[k]
	}
	var zero V
	return zero
}

// len returns the number of entries.
func (f *frozenMap[V]) len() int { return f.n }

// all yields every entry, in no set order.
func (f *frozenMap[V]) all() iter.Seq2[string, V] { return allOf(&f.shards) }

// entry is one key and its value.
type entry[V any] struct {
	k string
	v V
}

// sorted returns every entry, sorted by key, in one allocation: a
// snapshot writes the large tables in key order, and collecting the keys
// by appending, then looking each value up again, cost it tens of MB of
// garbage and a hash lookup a key.
func (f *frozenMap[V]) sorted() []entry[V] {
	out := make([]entry[V], 0, f.n)
	for k, v := range f.all() {
		out = append(out, entry[V]{k, v})
	}
	slices.SortFunc(out, func(a, b entry[V]) int { return strings.Compare(a.k, b.k) })
	return out
}

func allOf[V any](shards *[cowShards]*cowShard[V]) iter.Seq2[string, V] {
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
