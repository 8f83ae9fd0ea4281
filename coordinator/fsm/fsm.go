// Package fsm adapts the coordinator's state store to hashicorp/raft's FSM
// interface: it decodes log entries, applies them to the store and takes and
// restores snapshots (sections.go: the store's section, then the task
// output's).
package fsm

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"sync"

	"github.com/hashicorp/raft"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/coordinator/state/output"
)

// FSM is the raft.FSM over a state.Store.
type FSM struct {
	store *state.Store

	offerMu sync.Mutex
	offer   *Prepared // prepared.go
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

// Snapshot captures the state at this point in the log, with no encoding:
// the store's tables as a capture (state.Capture: copy on write, shared
// with the store) and the output as a read view of its store. Persist
// encodes and streams both, concurrently with later Apply calls.
func (f *FSM) Snapshot() (raft.FSMSnapshot, error) {
	return capture(f.store)
}

func capture(store *state.Store) (*snapshot, error) {
	c, out, err := store.CaptureWithOutput()
	if err != nil {
		return nil, err
	}
	return &snapshot{capture: c, output: out}, nil
}

// Save writes a snapshot of store as of now to w, in the form Restore
// reads (the operator's backup).
func Save(store *state.Store, w io.Writer) error {
	snap, err := capture(store)
	if err != nil {
		return err
	}
	defer snap.Release()
	return snap.write(w)
}

// Check decodes and validates a snapshot without keeping it. Its store
// section is decoded into memory, as a restore would; its output section
// is decoded and checked record by record, and dropped (checkOutput).
func Check(r io.Reader) error {
	return New(state.NewWithOutput(checkOutput{})).Restore(io.NopCloser(r))
}

// Restore replaces the state and the output with a snapshot's. Both
// sections are decoded and checked before either replaces anything: a
// bad snapshot leaves the state and the output as they were. A snapshot
// prepared already (Offer) is swapped in without being decoded again.
func (f *FSM) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	if p := f.takeOffer(); p != nil {
		return f.restoreOffered(rc, p)
	}
	tables, out, err := f.prepare(rc)
	if err != nil {
		return err
	}
	return returnMemory(f.store.RestorePrepared(tables, out))
}

// returnMemory, after a restore that succeeded, collects the state it
// replaced and what decoding the new one left behind, and hands the freed
// pages back to the kernel: at once a whole state's worth (S6: 250 MB of
// RSS), which the runtime would otherwise return over minutes, while
// the node goes on looking twice its size. The forced collection runs on
// the FSM goroutine, which a restore holds for far longer anyway.
func returnMemory(err error) error {
	if err == nil {
		debug.FreeOSMemory()
	}
	return err
}

// prepare decodes and checks a snapshot's sections, the output's into a
// staging copy beside the output (discarded unless handed on). That the
// output names only tasks the tables hold is checked where the two meet:
// RestorePrepared, and Prepare for an upload.
func (f *FSM) prepare(rc io.Reader) (*state.PreparedTables, output.Restore, error) {
	r := bufio.NewReaderSize(rc, chunkSize)
	version, err := readHeader(r)
	if err != nil {
		return nil, nil, err
	}
	if version == 0 {
		return f.prepareUnsectioned(r)
	}
	// The checksum is taken as the sections are read, and the trailer
	// held back from them (checksum.go).
	var sum *trailerReader
	if version >= checksummedVersion {
		sum = newTrailerReader(r, header(version))
		r = bufio.NewReaderSize(sum, chunkSize)
	}
	// Each section is decoded as it is read: neither is held whole.
	tables, err := prepareTables(r)
	if err != nil {
		return nil, nil, err
	}
	out, err := f.prepareOutput(r)
	if err != nil {
		return nil, nil, err
	}
	if sum != nil {
		if err := sum.verify(); err != nil {
			out.Discard()
			return nil, nil, fmt.Errorf("restore: %w", err)
		}
	}
	return tables, out, nil // RestorePrepared checks that the two agree
}

// prepareTables decodes and checks the store's section, which r is at,
// and leaves r at the next section.
func prepareTables(r *bufio.Reader) (*state.PreparedTables, error) {
	section := newChunkReader(r)
	tables, err := state.PrepareTables(section)
	if err != nil {
		if section.err != nil { // the stream's fault, not the section's
			return nil, fmt.Errorf("restore: store section: %w", section.err)
		}
		return nil, err
	}
	if err := section.drain(); err != nil {
		return nil, fmt.Errorf("restore: store section: %w", err)
	}
	return tables, nil
}

// prepareOutput stages the output section, which r is at and which must
// be the snapshot's last.
func (f *FSM) prepareOutput(r *bufio.Reader) (output.Restore, error) {
	section := newChunkReader(r)
	out, err := f.store.PrepareOutput(section)
	if err != nil {
		return nil, fmt.Errorf("restore: output section: %w", err)
	}
	if err := section.drain(); err != nil {
		out.Discard()
		return nil, fmt.Errorf("restore: output section: %w", err)
	}
	switch _, err = r.ReadByte(); {
	case err == nil:
		err = fmt.Errorf("%w: data after the last section", ErrBadSnapshot)
	case errors.Is(err, io.EOF):
		return out, nil
	default:
		err = fmt.Errorf("restore: %w", err)
	}
	out.Discard()
	return nil, err
}

type snapshot struct {
	capture *state.Capture
	output  output.Capture
}

func (s *snapshot) Persist(sink raft.SnapshotSink) error {
	if err := s.write(sink); err != nil {
		_ = sink.Cancel()
		return fmt.Errorf("persist snapshot: %w", err)
	}
	return sink.Close()
}

func (s *snapshot) write(sink io.Writer) error {
	sum := &summingWriter{w: sink, sum: newChecksum()}
	w := bufio.NewWriterSize(sum, chunkSize)
	if err := writeHeader(w); err != nil {
		return err
	}
	cw := newChunkWriter(w)
	if err := s.capture.Encode(cw); err != nil {
		return err
	}
	if err := cw.Close(); err != nil {
		return err
	}
	cw = newChunkWriter(w)
	if _, err := s.output.WriteTo(cw); err != nil {
		return err
	}
	if err := cw.Close(); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	_, err := sink.Write(sum.trailer())
	return err
}

// Release drops the capture and the output view.
func (s *snapshot) Release() {
	s.capture = nil
	s.output.Release()
}
