package state

import (
	"bytes"
	"errors"
	"slices"
	"testing"
)

// failingRestore is an output restore whose Commit fails.
type failingRestore struct {
	tasks     []string
	discarded int
}

var errCommit = errors.New("commit refused")

func (f *failingRestore) Tasks() []string { return f.tasks }
func (f *failingRestore) Commit() error   { return errCommit }
func (f *failingRestore) Discard()        { f.discarded++ }

// An output whose Commit fails leaves the state as it was (the output
// too, by Commit's contract), and the restore is discarded.
func TestRestoreWithOutputCommitFails(t *testing.T) {
	src := outputFixture(t)
	mustApply(t, src, appendCmd("j-a", 1, "from the snapshot", 0))
	section := snapshotBytes(t, src)

	s := New()
	mustApply(t, s, register("w1", "GPU-1"), submit("k", 1, 0))
	before := snapshotBytes(t, s)
	out := &failingRestore{tasks: []string{"j-a"}}
	if err := s.RestoreWithOutput(bytes.NewReader(section), out); !errors.Is(err, errCommit) {
		t.Fatalf("restore: %v, want the commit's error", err)
	}
	if after := snapshotBytes(t, s); !bytes.Equal(before, after) {
		t.Error("a restore whose output failed to commit changed the state")
	}
	if out.discarded != 1 {
		t.Errorf("the failed output was discarded %d times, want once", out.discarded)
	}
	if got := stored(t, s, "j-a"); !slices.Equal(got, nil) {
		t.Errorf("output changed: %q", got)
	}
}
