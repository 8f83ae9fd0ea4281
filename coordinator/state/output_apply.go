package state

import (
	"fmt"

	"github.com/gpulayer/gpulayer/coordinator/state/output"
)

// Markers stored in place of output past a bound, once per task.
const (
	TaskOutputMarker  = "[gpulayer: log limit reached, further output dropped]\n"
	TotalOutputMarker = "[gpulayer: coordinator output limit reached, further output of this task dropped]\n"
)

// keepOutput queues one record for the output store.
func (s *Store) keepOutput(taskID string, r output.Record) {
	s.outOps = append(s.outOps, output.Op{TaskID: taskID, Record: r})
}

// dropOutput queues the removal of t's output and takes it off the total.
func (s *Store) dropOutput(t *Task) {
	s.outputBytes -= t.LogBytes
	s.outOps = append(s.outOps, output.Op{TaskID: t.ID, Delete: true})
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
func (s *Store) CaptureOutput() (output.Capture, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.output.Capture()
}

// CaptureWithOutput captures the store's tables (Capture) and a view of
// the output at the same point in the log: both are taken under one hold
// of the read lock, so neither an Apply nor a restore falls between them.
// Neither is encoded here.
func (s *Store) CaptureWithOutput() (*Capture, output.Capture, error) {
	c := s.newCapture()
	s.applyMu.Lock()
	defer s.applyMu.Unlock()
	s.mu.RLock()
	defer s.mu.RUnlock()
	out, err := s.output.Capture()
	if err != nil {
		return nil, nil, err
	}
	s.captureLocked(c)
	return c, out, nil
}
