package outputstore

import (
	"bytes"
	"errors"
	"path/filepath"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/state/output"
)

// restoreOne prepares and commits a section holding one record of task.
func restoreOne(t *testing.T, s *Store, task string) {
	t.Helper()
	var b bytes.Buffer
	if err := output.NewEncoder(&b).Encode(task, output.Record{Seq: 1, Data: "restored"}); err != nil {
		t.Fatal(err)
	}
	prep, err := s.Prepare(&b)
	if err != nil {
		t.Fatal(err)
	}
	if err := prep.Commit(); err != nil {
		prep.Discard()
		t.Fatal(err)
	}
}

// A capture released twice lets its file go once: the store's own file
// stays open, readable and writable, and a later capture works.
func TestReleaseTwice(t *testing.T) {
	cases := []struct {
		name    string
		restore bool // a restore replaces the capture's file before the releases
	}{
		{"on the current file", false},
		{"on a replaced file", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := openTemp(t)
			if err := s.Write([]output.Op{{TaskID: "t", Record: output.Record{Seq: 1, Data: "x"}}}); err != nil {
				t.Fatal(err)
			}
			cp, err := s.Capture()
			if err != nil {
				t.Fatal(err)
			}
			task := "t"
			if c.restore {
				restoreOne(t, s, "new")
				task = "new"
			}
			cp.Release()
			cp.Release()
			if _, err := cp.WriteTo(&bytes.Buffer{}); !errors.Is(err, ErrReleased) {
				t.Errorf("WriteTo after Release: %v, want ErrReleased", err)
			}
			if err := s.Write([]output.Op{{TaskID: task, Record: output.Record{Seq: 2, Data: "y"}}}); err != nil {
				t.Fatalf("write after a double release: %v", err)
			}
			recs, err := s.Read(task, 0, 1<<20)
			if err != nil || len(recs) != 2 {
				t.Fatalf("read after a double release: %+v, %v", recs, err)
			}
			again, err := s.Capture()
			if err != nil {
				t.Fatal(err)
			}
			defer again.Release()
			if _, err := again.WriteTo(&bytes.Buffer{}); err != nil {
				t.Errorf("capture after a double release: %v", err)
			}
		})
	}
}

// Releasing a file more often than it was acquired is a bug, and panics.
func TestGenerationOverReleasePanics(t *testing.T) {
	db, err := create(filepath.Join(t.TempDir(), FileName), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	g := newGeneration(db)
	g.release() // the last reference: closes the file
	if err := g.wait(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if r := recover(); r != errOverReleased {
			t.Errorf("second release: recovered %v, want errOverReleased", r)
		}
	}()
	g.release()
}
