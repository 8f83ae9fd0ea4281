package state

import (
	"fmt"
	"io"

	"github.com/gpulayer/gpulayer/coordinator/state/output"
)

// A snapshot restores in three steps, so that its sections can be read
// from the stream in order without holding either whole: PrepareTables
// decodes the store section, PrepareOutput the output section, and
// RestorePrepared swaps both in together.

// PreparedTables is a snapshot's store section, decoded and checked,
// waiting to replace a store's state (RestorePrepared).
type PreparedTables struct{ scratch *Store }

// PrepareTables decodes and checks a store section (Restore's checks).
func PrepareTables(section io.Reader) (*PreparedTables, error) {
	scratch := New()
	if err := scratch.Restore(section); err != nil {
		return nil, err
	}
	return &PreparedTables{scratch: scratch}, nil
}

// Holds checks that every task out has output for is among the tables'.
func (t *PreparedTables) Holds(out output.Restore) error {
	for _, id := range out.Tasks() {
		if t.scratch.tasks.Get(id) == nil {
			return fmt.Errorf("restore: output of task %s, which the snapshot lacks: %w", id, ErrInvalid)
		}
	}
	return nil
}

// PrepareOutput decodes an output section into a replacement for the
// output, for RestorePrepared.
func (s *Store) PrepareOutput(r io.Reader) (output.Restore, error) {
	return s.output.Prepare(r)
}

// RestorePrepared replaces the state with t and the output with out,
// together, and takes out over (it is committed or discarded). Every
// task with output must exist in t: otherwise, or if out fails to
// commit, the state and the output stay as they were. (Restore alone
// replaces the store's section only and leaves the output as it was; in
// both, the output total is counted again from the restored tasks.)
func (s *Store) RestorePrepared(t *PreparedTables, out output.Restore) error {
	committed := false
	defer func() {
		if !committed {
			out.Discard()
		}
	}()
	scratch := t.scratch
	if err := t.Holds(out); err != nil {
		return err
	}
	// As Apply: applyMu, then the write lock.
	s.applyMu.Lock()
	defer s.applyMu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	// The output first: a Commit that fails changes nothing, and then
	// the tables stay as they were too. Past it nothing fails.
	if err := out.Commit(); err != nil {
		return fmt.Errorf("restore: output: %w", err)
	}
	committed = true
	s.tables = scratch.tables // the total too, counted by load
	s.derived.DropAll(false)  // workerview.go
	s.markPending()
	s.wake()
	return nil
}
