package state

import (
	"fmt"
	"io"
)

// Markers stored in place of output past a bound, once per task.
const (
	TaskOutputMarker  = "[gpulayer: log limit reached, further output dropped]\n"
	TotalOutputMarker = "[gpulayer: coordinator output limit reached, further output of this task dropped]\n"
)

// keepOutput queues one record for the output store.
func (s *Store) keepOutput(taskID string, r LogRecord) {
	s.outOps = append(s.outOps, OutputOp{TaskID: taskID, Record: r})
}

// dropOutput queues the removal of t's output and takes it off the total.
func (s *Store) dropOutput(t *Task) {
	s.outputBytes -= t.LogBytes
	s.outOps = append(s.outOps, OutputOp{TaskID: t.ID, Delete: true})
}

// flushOutput writes the changes the Apply under way made to the output,
// in one Write; it runs as Apply ends, under the write lock, so no read
// sees the state without its output. A store that cannot write is fatal:
// this coordinator would hold less output than the log says, and no
// later Apply can repair that (the Raft log holds the chunks; a restart
// rebuilds the output from the snapshot and the log).
func (s *Store) flushOutput() {
	if len(s.outOps) == 0 {
		return
	}
	err := s.output.Write(s.outOps)
	clear(s.outOps)
	s.outOps = s.outOps[:0]
	if err != nil {
		panic(fmt.Sprintf("state: writing task output: %v", err))
	}
}

// CaptureOutput takes a view of the output as it is now.
func (s *Store) CaptureOutput() (OutputCapture, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.output.Capture()
}

// CaptureWithOutput captures the store's tables (Capture) and a view of
// the output at the same point in the log: both are taken under one hold
// of the read lock, so neither an Apply nor a restore falls between them.
// Neither is encoded here.
func (s *Store) CaptureWithOutput() (*Capture, OutputCapture, error) {
	s.applyMu.Lock()
	defer s.applyMu.Unlock()
	s.mu.RLock()
	defer s.mu.RUnlock()
	out, err := s.output.Capture()
	if err != nil {
		return nil, nil, err
	}
	return s.captureLocked(), out, nil
}

// PrepareOutput decodes an output section into a replacement for the
// output, for RestoreWithOutput.
func (s *Store) PrepareOutput(r io.Reader) (OutputRestore, error) {
	return s.output.Prepare(r)
}

// RestoreWithOutput replaces the state with a snapshot's store section
// and the output with out, together, and takes out over (it is committed
// or discarded). Both are decoded and checked first (Restore's checks,
// and every task with output exists): one that fails leaves the state
// and the output as they were. (Restore alone replaces the store's
// section only, and leaves the output and its total as they were.)
func (s *Store) RestoreWithOutput(section io.Reader, out OutputRestore) error {
	committed := false
	defer func() {
		if !committed {
			out.Discard()
		}
	}()
	scratch := New()
	if err := scratch.Restore(section); err != nil {
		return err
	}
	for _, id := range out.Tasks() {
		if scratch.tasks[id] == nil {
			return fmt.Errorf("restore: output of task %s, which the snapshot lacks: %w", id, ErrInvalid)
		}
	}
	total := 0
	for _, t := range scratch.tasks {
		total += t.LogBytes
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
	s.tables = scratch.tables
	s.outputBytes = total
	s.markPending()
	s.wake()
	return nil
}
