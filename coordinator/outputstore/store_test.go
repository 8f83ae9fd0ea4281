package outputstore

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/state/output"
	"github.com/gpulayer/gpulayer/coordinator/state/output/outputtest"
)

// openTemp opens a store in a test's temporary dir, closed at its end.
func openTemp(t *testing.T) *Store {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), FileName), Options{MmapBytes: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestBoltOutput(t *testing.T) {
	outputtest.Run(t, func(t *testing.T) output.Store { return openTemp(t) })
}

// Open starts from an empty file whatever was there: the snapshot and
// the log rebuild it.
func TestOpenEmptiesTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	s, err := Open(path, Options{MmapBytes: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Write([]output.Op{{TaskID: "t1", Record: output.Record{Seq: 1, Data: "old"}}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(path, Options{MmapBytes: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if n, err := s.Count("t1"); err != nil || n != 0 {
		t.Errorf("reopened file holds %d records (%v), want none", n, err)
	}
}

// Open removes the staging files of restores a crash left beside the
// output file, and nothing else.
func TestOpenRemovesStagingFiles(t *testing.T) {
	dir := t.TempDir()
	left := []string{FileName + ".next", FileName + ".next-1", FileName + ".next-42"}
	kept := []string{FileName + ".nextday", "other.db.next-1", "raft.db"}
	for _, name := range append(slices.Clone(left), kept...) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s, err := Open(filepath.Join(dir, FileName), Options{MmapBytes: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if want := append([]string{FileName}, kept...); !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))) {
		t.Fatalf("files after Open: %q, want %q", got, want)
	}
}

// A restore swaps the new file in under the output file's name and
// leaves no staging file; a refused one leaves none either.
func TestRestoreFiles(t *testing.T) {
	s := openTemp(t)
	dir := filepath.Dir(s.path)
	bad, err := s.Prepare(badSection{})
	if err == nil {
		bad.Discard()
		t.Fatal("bad section prepared")
	}
	prep, err := s.Prepare(strings.NewReader(""))
	if err != nil {
		t.Fatal(err)
	}
	if err := prep.Commit(); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != FileName {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("data dir holds %v, want only %s", names, FileName)
	}
}

type badSection struct{}

func (badSection) Read(p []byte) (int, error) { return copy(p, "{not json"), nil }
