package fsm

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/coordinator/state/output"
)

// flips returns the byte positions of an n-byte snapshot to spoil: every
// one where there are at most max, else a seeded sample of max.
func flips(n, max int) []int {
	if n <= max {
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out
	}
	rng := rand.New(rand.NewPCG(1, 2))
	return rng.Perm(n)[:max]
}

// A snapshot with one byte changed, anywhere, is refused by both
// restores that read it: Raft's (Restore, one pass over a stream) and the
// operator's upload (Prepare, side by side from a file). Before the
// checksum trailer most single-byte changes restored (finding 2 of the
// third review).
func TestEveryFlippedByteIsRefused(t *testing.T) {
	src := New(state.NewWithOutput(output.NewMem()))
	apply(t, src, running()...)
	apply(t, src, out(1, "from the snapshot\n"))
	good := persist(t, src)
	if err := New(state.New()).Restore(io.NopCloser(bytes.NewReader(good))); err != nil {
		t.Fatalf("the unspoilt snapshot: %v", err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	dir := t.TempDir()
	prep := target(t, dir)
	for _, pos := range flips(len(good), 200) {
		bad := bytes.Clone(good)
		bad[pos] ^= byte(1 + rng.IntN(255)) // never 0: the byte changes
		if err := New(state.New()).Restore(io.NopCloser(bytes.NewReader(bad))); err == nil {
			t.Errorf("byte %d of %d changed: Restore took it", pos, len(good))
		}
		p, err := prep.Prepare(bytes.NewReader(bad), int64(len(bad)))
		if err == nil {
			p.Discard()
			t.Errorf("byte %d of %d changed: Prepare took it", pos, len(good))
		}
	}
}

// A snapshot's checksum is the last thing checked, so what a damaged
// body does not already refuse, the checksum does, under its sentinel.
func TestChecksumMismatchIsNamed(t *testing.T) {
	src := New(state.New())
	apply(t, src, running()...)
	good := persist(t, src)
	bad := bytes.Clone(good)
	bad[len(bad)-1] ^= 0xff // the trailer itself
	err := New(state.New()).Restore(io.NopCloser(bytes.NewReader(bad)))
	if !errors.Is(err, ErrChecksum) || !errors.Is(err, ErrBadSnapshot) {
		t.Fatalf("restore: %v, want %v", err, ErrChecksum)
	}
	if _, err := target(t, t.TempDir()).Prepare(bytes.NewReader(bad), int64(len(bad))); !errors.Is(err, ErrChecksum) {
		t.Fatalf("prepare: %v, want %v", err, ErrChecksum)
	}
}

// A version 1 sectioned snapshot, written before the checksum, has none
// and still restores: its version says so.
func TestVersionOneSnapshotHasNoChecksum(t *testing.T) {
	src := New(state.New())
	apply(t, src, running()...)
	v1 := section(1, storeSection(t, src), nil)
	if err := New(state.New()).Restore(io.NopCloser(bytes.NewReader(v1))); err != nil {
		t.Fatalf("version 1: %v", err)
	}
}
