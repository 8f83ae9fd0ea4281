package fit

import (
	"hash/maphash"
	"strconv"
	"sync"

	"github.com/gpulayer/gpulayer/coordinator/command"
)

// Identity is a digest (identity.go), computed on every placement for
// every device a worker offers: a match over a large fleet spent most of
// its time there. memoIdentity keeps the last digest per UUID with a
// fingerprint of the fields it was made from, and answers from it while
// the device's fingerprint is the same: a pure function's cache, so
// every replica still decides the same.
//
// The fingerprint is 128 bits of maphash over the fields Identity
// reads, under two seeds of this process. It replaced a whole copy of
// each device (its links cloned), which held 25 MB at 80,000 GPUs (S6's
// heap profile); an entry is now its key, the fingerprint and the digest.
// Two different devices of one UUID share a fingerprint with a chance of
// about 2^-128, the odds of the identity digest itself (128 bits of
// SHA-256) matching a different device.

// identityMemo is the cache; its size is bounded by starting over.
var identityMemo = struct {
	sync.Mutex
	m map[string]memoEntry
}{m: map[string]memoEntry{}}

// identitySeeds are the fingerprint's two seeds.
var identitySeeds = [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}

// maxIdentityMemo bounds the cached devices (a fleet of 10,000 workers
// of 8 GPUs, with room for MIG devices).
const maxIdentityMemo = 200_000

type memoEntry struct {
	print [2]uint64
	id    string
}

// identityPrint is the fingerprint of the fields Identity reads, each
// string written after its length and each number ended by a mark, so
// that no two devices run together; links in the order reported (a
// reordering only misses the cache).
func identityPrint(d command.Device) [2]uint64 {
	var out [2]uint64
	for i, seed := range identitySeeds {
		var h maphash.Hash
		h.SetSeed(seed)
		for _, s := range [...]string{d.Name, d.ComputeCapability, d.PCIDevice, d.Parent, d.MIGProfile, d.Sharing} {
			printString(&h, s)
		}
		switch {
		case d.NUMANode != nil:
			printInt(&h, *d.NUMANode)
		default:
			h.WriteByte('-')
		}
		if d.MIGEnabled {
			h.WriteByte('m')
		}
		printInt(&h, len(d.Links))
		for _, l := range d.Links {
			printString(&h, l.Peer)
			printString(&h, l.Path)
			printInt(&h, l.NvLinks)
		}
		out[i] = h.Sum64()
	}
	return out
}

func printInt(h *maphash.Hash, n int) {
	var b [24]byte
	h.Write(append(strconv.AppendInt(b[:0], int64(n), 10), ';'))
}

func printString(h *maphash.Hash, s string) {
	printInt(h, len(s))
	h.WriteString(s)
}

// memoIdentity is Identity(d), from the cache when d's fingerprint is
// that of the device it was last computed from.
func memoIdentity(d command.Device) string {
	p := identityPrint(d)
	identityMemo.Lock()
	e, ok := identityMemo.m[d.UUID]
	identityMemo.Unlock()
	if ok && e.print == p {
		return e.id
	}
	id := Identity(d)
	identityMemo.Lock()
	if len(identityMemo.m) >= maxIdentityMemo {
		identityMemo.m = map[string]memoEntry{}
	}
	identityMemo.m[d.UUID] = memoEntry{print: p, id: id}
	identityMemo.Unlock()
	return id
}
