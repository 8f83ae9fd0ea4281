// Package fsm adapts the coordinator's state store to hashicorp/raft's FSM
// interface: it decodes log entries, applies them to the store and takes and
// restores snapshots.
package fsm

import (
	"fmt"
	"io"

	"github.com/hashicorp/raft"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state"
)

// FSM is the raft.FSM over a state.Store.
type FSM struct {
	store *state.Store
}

var (
	_ raft.FSM         = (*FSM)(nil)
	_ raft.FSMSnapshot = (*snapshot)(nil)
)

// New returns an FSM applying to store.
func New(store *state.Store) *FSM { return &FSM{store: store} }

// Store returns the underlying store.
func (f *FSM) Store() *state.Store { return f.store }

// Apply decodes and applies one log entry. Entries that are not commands
// (configuration changes, barriers) never reach here; a command that does
// not decode yields an error result and changes nothing.
func (f *FSM) Apply(l *raft.Log) any {
	if l.Type != raft.LogCommand {
		return nil
	}
	c, err := command.Decode(l.Data)
	if err != nil {
		return state.Refused(fmt.Errorf("%w: %v", state.ErrInvalid, err))
	}
	return f.store.Apply(c)
}

// Snapshot captures the state at this point in the log: a detached copy
// taken under the store's read lock, with no encoding. Persist encodes it
// in the background, concurrently with later Apply calls.
func (f *FSM) Snapshot() (raft.FSMSnapshot, error) {
	return &snapshot{capture: f.store.Capture()}, nil
}

// Restore replaces the state with a snapshot.
func (f *FSM) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	return f.store.Restore(rc)
}

type snapshot struct {
	capture *state.Capture
}

// Persist streams the capture into the sink.
func (s *snapshot) Persist(sink raft.SnapshotSink) error {
	if err := s.capture.Encode(sink); err != nil {
		_ = sink.Cancel()
		return fmt.Errorf("persist snapshot: %w", err)
	}
	return sink.Close()
}

// Release drops the capture.
func (s *snapshot) Release() { s.capture = nil }
