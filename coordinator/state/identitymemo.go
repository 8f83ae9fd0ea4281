package state

import (
	"slices"
	"sync"

	"github.com/gpulayer/gpulayer/coordinator/command"
)

// identityOf is a digest (gpubind.go), computed on every placement for
// every device a worker offers: a match over a large fleet spent most of
// its time there. memoIdentity keeps the last digest per UUID with the
// fields it was made from, and answers from it while they are the same:
// a pure function's cache, so every replica still decides the same.

// identityMemo is the cache; its size is bounded by starting over.
var identityMemo = struct {
	sync.Mutex
	m map[string]memoEntry
}{m: map[string]memoEntry{}}

// maxIdentityMemo bounds the cached devices (a fleet of 10,000 workers
// of 8 GPUs, with room for MIG devices).
const maxIdentityMemo = 200_000

type memoEntry struct {
	dev command.Device
	id  string
}

// sameIdentityFields reports whether a and b have the fields identityOf
// reads in common.
func sameIdentityFields(a, b command.Device) bool {
	return a.Name == b.Name && a.ComputeCapability == b.ComputeCapability && a.PCIDevice == b.PCIDevice &&
		a.MIGEnabled == b.MIGEnabled && a.Parent == b.Parent && a.MIGProfile == b.MIGProfile && a.Sharing == b.Sharing &&
		((a.NUMANode == nil) == (b.NUMANode == nil) && (a.NUMANode == nil || *a.NUMANode == *b.NUMANode)) &&
		slices.Equal(a.Links, b.Links)
}

// memoIdentity is identityOf(d), from the cache when d's fields are
// those it was last computed from.
func memoIdentity(d command.Device) string {
	identityMemo.Lock()
	e, ok := identityMemo.m[d.UUID]
	identityMemo.Unlock()
	if ok && sameIdentityFields(e.dev, d) {
		return e.id
	}
	id := identityOf(d)
	keep := d
	keep.Links = slices.Clone(d.Links)
	if d.NUMANode != nil {
		n := *d.NUMANode
		keep.NUMANode = &n
	}
	identityMemo.Lock()
	if len(identityMemo.m) >= maxIdentityMemo {
		identityMemo.m = map[string]memoEntry{}
	}
	identityMemo.m[d.UUID] = memoEntry{dev: keep, id: id}
	identityMemo.Unlock()
	return id
}
