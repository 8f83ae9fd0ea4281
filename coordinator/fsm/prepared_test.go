package fsm

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/outputstore"
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/coordinator/state/output"
)

// openOutput opens a bbolt output store in dir.
func openOutput(t *testing.T, dir string) *outputstore.Store {
	t.Helper()
	s, err := outputstore.Open(filepath.Join(dir, outputstore.FileName), outputstore.Options{MmapBytes: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// staging lists the restores' staging files in dir.
func staging(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if strings.Contains(e.Name(), ".next") {
			out = append(out, e.Name())
		}
	}
	return out
}

// source is an FSM holding job j with output, and a snapshot of it.
func source(t *testing.T) (*FSM, []byte) {
	t.Helper()
	src := New(state.NewWithOutput(output.NewMem()))
	apply(t, src, running()...)
	apply(t, src, out(1, "from the snapshot\n"))
	return src, persist(t, src)
}

// target is an FSM over a bbolt output store in dir, holding other state.
func target(t *testing.T, dir string) *FSM {
	t.Helper()
	f := New(state.NewWithOutput(openOutput(t, dir)))
	apply(t, f, running()...)
	apply(t, f, out(1, "kept\n"))
	return f
}

// A prepared snapshot, offered, is what the next Restore of the same
// bytes swaps in: the state and the output are the snapshot's, and the
// restore staged nothing of its own (the prepared staging file is the
// one committed: it was decoded once).
func TestOfferedSnapshotIsSwappedIn(t *testing.T) {
	src, snap := source(t)
	dir := t.TempDir()
	f := target(t, dir)
	p, err := f.Prepare(bytes.NewReader(snap), int64(len(snap)))
	if err != nil {
		t.Fatal(err)
	}
	if got := staging(t, dir); len(got) != 1 {
		t.Fatalf("staging files after Prepare: %q, want one", got)
	}
	if got := logs(t, f); !slices.Equal(got, []string{"kept\n"}) {
		t.Fatalf("Prepare changed the output: %q", got)
	}
	withdraw, err := f.Offer(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Restore(io.NopCloser(&onePass{r: bytes.NewReader(snap)})); err != nil {
		t.Fatal(err)
	}
	if got := staging(t, dir); len(got) != 0 {
		t.Fatalf("staging files after the restore: %q, want none", got)
	}
	withdraw() // taken: nothing left to drop
	if !bytes.Equal(storeSection(t, f), storeSection(t, src)) {
		t.Error("state differs from the snapshot's")
	}
	if got := logs(t, f); !slices.Equal(got, []string{"from the snapshot\n"}) {
		t.Errorf("output after the restore: %q", got)
	}
}

// A Restore handed other bytes than the offer was prepared from (a
// leader's install on a node whose operator restore is in flight) fails,
// changes nothing, and drops the offer: the next Restore decodes.
func TestOfferOfOtherBytesIsRefused(t *testing.T) {
	src, snap := source(t)
	apply(t, src, out(2, "later\n"))
	other := persist(t, src)
	dir := t.TempDir()
	f := target(t, dir)
	before := storeSection(t, f)
	for name, b := range map[string][]byte{"other": other, "truncated": snap[:len(snap)-1]} {
		t.Run(name, func(t *testing.T) {
			p, err := f.Prepare(bytes.NewReader(snap), int64(len(snap)))
			if err != nil {
				t.Fatal(err)
			}
			withdraw, err := f.Offer(p)
			if err != nil {
				t.Fatal(err)
			}
			defer withdraw()
			if err := f.Restore(io.NopCloser(bytes.NewReader(b))); !errors.Is(err, ErrNotPrepared) {
				t.Fatalf("restore of %s bytes: %v, want ErrNotPrepared", name, err)
			}
			if !bytes.Equal(storeSection(t, f), before) {
				t.Error("a refused restore changed the state")
			}
			if got := logs(t, f); !slices.Equal(got, []string{"kept\n"}) {
				t.Errorf("a refused restore changed the output: %q", got)
			}
			if got := staging(t, dir); len(got) != 0 {
				t.Errorf("staging files left: %q", got)
			}
		})
	}
	// No offer stands: the next restore decodes what it is given.
	if err := f.Restore(io.NopCloser(bytes.NewReader(other))); err != nil {
		t.Fatal(err)
	}
	if got := logs(t, f); !slices.Equal(got, []string{"from the snapshot\n", "later\n"}) {
		t.Errorf("output after a decoded restore: %q", got)
	}
}

// An offer no Restore took is dropped with its staging file when it is
// withdrawn; while it stands, a second offer is refused (a Restore meant
// for the first would find the second, fail, and Raft would stop the
// node), even of the same prepared snapshot.
func TestOneOfferStandsAtATime(t *testing.T) {
	_, snap := source(t)
	dir := t.TempDir()
	f := target(t, dir)
	first, err := f.Prepare(bytes.NewReader(snap), int64(len(snap)))
	if err != nil {
		t.Fatal(err)
	}
	withdraw, err := f.Offer(first)
	if err != nil {
		t.Fatal(err)
	}
	second, err := f.Prepare(bytes.NewReader(snap), int64(len(snap)))
	if err != nil {
		t.Fatal(err)
	}
	for name, p := range map[string]*Prepared{"another": second, "the same": first} {
		if _, err := f.Offer(p); !errors.Is(err, ErrOfferStanding) {
			t.Fatalf("offer of %s while one stands: %v, want ErrOfferStanding", name, err)
		}
	}
	second.Discard()
	if got := staging(t, dir); len(got) != 1 {
		t.Fatalf("staging files with one offer standing: %q", got)
	}
	withdraw()
	withdraw() // twice: nothing more to drop
	if got := staging(t, dir); len(got) != 0 {
		t.Fatalf("staging files after the withdrawal: %q", got)
	}
	if got := logs(t, f); !slices.Equal(got, []string{"kept\n"}) {
		t.Errorf("an offer never taken changed the output: %q", got)
	}
	// Withdrawn, the offer no longer stands.
	again, err := f.Prepare(bytes.NewReader(snap), int64(len(snap)))
	if err != nil {
		t.Fatal(err)
	}
	withdraw, err = f.Offer(again)
	if err != nil {
		t.Fatalf("offer after a withdrawal: %v", err)
	}
	withdraw()
}

// Prepare refuses what Restore refuses, with the same errors, and stages
// nothing it keeps.
func TestPrepareRefusesBadSnapshots(t *testing.T) {
	src := New(state.NewWithOutput(output.NewMem()))
	apply(t, src, running()...)
	apply(t, src, out(1, "from the snapshot\n"))
	_, cases := badSnapshots(t, src)
	dir := t.TempDir()
	f := target(t, dir)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := f.Prepare(bytes.NewReader(c.snap), int64(len(c.snap))); !errors.Is(err, c.want) {
				t.Fatalf("prepare: %v, want %v", err, c.want)
			}
			if got := staging(t, dir); len(got) != 0 {
				t.Errorf("staging files left: %q", got)
			}
		})
	}
}

// onePass offers Read alone, as the reader Raft hands a restore does: the
// restore cannot seek back or read at an offset to go over it twice.
type onePass struct{ r io.Reader }

func (o *onePass) Read(b []byte) (int, error) { return o.r.Read(b) }

// Prepare reads a snapshot's parts side by side; what it decides is what
// one pass front to back decides: the same digest and size for a good
// snapshot, the same refusal, in the same order, for a bad one.
func TestPrepareSideBySideMatchesOnePass(t *testing.T) {
	src := New(state.NewWithOutput(output.NewMem()))
	apply(t, src, running()...)
	apply(t, src, out(1, "from the snapshot\n"))
	good, cases := badSnapshots(t, src)
	legacy, err := os.ReadFile(filepath.Join("testdata", "unsectioned-v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	cases = append(cases, badSnapshot{"good", good, nil}, badSnapshot{"unsectioned", legacy, nil})
	dir := t.TempDir()
	f := target(t, dir)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			side, sideErr := f.Prepare(bytes.NewReader(c.snap), int64(len(c.snap)))
			whole, wholeErr := f.prepareWhole(bytes.NewReader(c.snap))
			defer side.Discard()
			defer whole.Discard()
			if (sideErr == nil) != (wholeErr == nil) || (sideErr != nil && sideErr.Error() != wholeErr.Error()) {
				t.Fatalf("side by side: %v; one pass: %v", sideErr, wholeErr)
			}
			if !errors.Is(sideErr, c.want) {
				t.Fatalf("prepare: %v, want %v", sideErr, c.want)
			}
			if sideErr == nil && (side.digest != whole.digest || side.size != whole.size || side.size != int64(len(c.snap))) {
				t.Fatalf("digest or size differ: %x/%d against %x/%d", side.digest, side.size, whole.digest, whole.size)
			}
		})
	}
}

// countingReaderAt counts the bytes read through it.
type countingReaderAt struct {
	r io.ReaderAt
	n atomic.Int64
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.n.Add(int64(n))
	return n, err
}

// Once the store's section is refused, the output section and the hash
// stop reading: refusing a large upload costs a fraction of reading it
// whole twice more, as preparing it side by side would without the stop
// (the output staged in full, the hash taken of everything).
func TestRefusedStoreSectionStopsTheOtherParts(t *testing.T) {
	line := []byte(`{"task":"j-a","data":"` + strings.Repeat("x", 1000) + `"}` + "\n")
	snap := section(1, []byte(`{"version":9}`), bytes.Repeat(line, 64<<10)) // 64 MiB of output
	dir := t.TempDir()
	f := target(t, dir)
	ra := &countingReaderAt{r: bytes.NewReader(snap)}
	if _, err := f.Prepare(ra, int64(len(snap))); !errors.Is(err, state.ErrInvalid) {
		t.Fatalf("prepare: %v, want the store section's refusal", err)
	}
	if got := staging(t, dir); len(got) != 0 {
		t.Errorf("staging files left: %q", got)
	}
	// Without the stop the two other parts read the whole file each.
	if read := ra.n.Load(); read >= 2*int64(len(snap)) {
		t.Errorf("read %d bytes of a %d-byte snapshot whose store section was refused", read, len(snap))
	}
}
