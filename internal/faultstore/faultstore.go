// Package faultstore wraps the stores a Raft server writes to (its log,
// its stable store and its snapshots) so that a test can make the disk
// misbehave the ways real disks do:
//
//   - a write error: the next n log writes fail and store nothing;
//   - an fsync error: the next n log writes reach the store, and then
//     report failure, as when the data was written but its flush failed
//     (the caller cannot tell whether it is durable);
//   - a full disk: every write of the log, the stable store and new
//     snapshots fails with ENOSPC until the disk is freed.
//
// Reads are never changed. A Disk is shared by the three wrappers of one
// server and is safe for concurrent use.
package faultstore

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"syscall"

	"github.com/hashicorp/raft"
)

// ErrInjected marks every error the package makes; a full disk's errors
// also match syscall.ENOSPC.
var ErrInjected = errors.New("faultstore: injected fault")

// Disk is the fault state of one server's disk.
type Disk struct {
	mu         sync.Mutex
	failWrites int
	failSyncs  int
	full       bool
	injected   map[string]int
}

// New returns a disk that behaves until told otherwise.
func New() *Disk { return &Disk{injected: map[string]int{}} }

// FailWrites makes the next n log writes fail before they store anything.
func (d *Disk) FailWrites(n int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.failWrites = n
}

// FailSyncs makes the next n log writes store their entries and then
// report failure.
func (d *Disk) FailSyncs(n int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.failSyncs = n
}

// SetFull fills or frees the disk.
func (d *Disk) SetFull(full bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.full = full
}

// Injected counts the faults delivered so far, by kind ("write", "sync",
// "full").
func (d *Disk) Injected() map[string]int {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make(map[string]int, len(d.injected))
	for k, v := range d.injected {
		out[k] = v
	}
	return out
}

// verdict is what happens to one write.
type verdict int

const (
	pass     verdict = iota
	failNow          // fail without writing
	failSync         // write, then fail
)

var errFull = fmt.Errorf("%w: %w", ErrInjected, syscall.ENOSPC)

// logWrite decides the fate of one log write and returns the error it is
// to report.
func (d *Disk) logWrite() (verdict, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
	case d.full:
		d.injected["full"]++
		return failNow, errFull
	case d.failWrites > 0:
		d.failWrites--
		d.injected["write"]++
		return failNow, fmt.Errorf("%w: write error: %w", ErrInjected, syscall.EIO)
	case d.failSyncs > 0:
		d.failSyncs--
		d.injected["sync"]++
		return failSync, fmt.Errorf("%w: fsync error: %w", ErrInjected, syscall.EIO)
	}
	return pass, nil
}

// otherWrite decides the fate of a stable-store write or a snapshot: only
// a full disk refuses them.
func (d *Disk) otherWrite() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.full {
		d.injected["full"]++
		return errFull
	}
	return nil
}

// LogStore wraps a raft.LogStore.
func (d *Disk) LogStore(s raft.LogStore) raft.LogStore { return &logStore{LogStore: s, d: d} }

// StableStore wraps a raft.StableStore.
func (d *Disk) StableStore(s raft.StableStore) raft.StableStore {
	return &stableStore{StableStore: s, d: d}
}

// SnapshotStore wraps a raft.SnapshotStore.
func (d *Disk) SnapshotStore(s raft.SnapshotStore) raft.SnapshotStore {
	return &snapshotStore{SnapshotStore: s, d: d}
}

type logStore struct {
	raft.LogStore
	d *Disk
}

func (s *logStore) write(f func() error) error {
	v, err := s.d.logWrite()
	switch v {
	case failNow:
		return err
	case failSync:
		if werr := f(); werr != nil {
			return werr
		}
		return err
	}
	return f()
}

func (s *logStore) StoreLog(l *raft.Log) error {
	return s.write(func() error { return s.LogStore.StoreLog(l) })
}

func (s *logStore) StoreLogs(ls []*raft.Log) error {
	return s.write(func() error { return s.LogStore.StoreLogs(ls) })
}

func (s *logStore) DeleteRange(lo, hi uint64) error {
	if err := s.d.otherWrite(); err != nil {
		return err
	}
	return s.LogStore.DeleteRange(lo, hi)
}

type stableStore struct {
	raft.StableStore
	d *Disk
}

func (s *stableStore) Set(k, v []byte) error {
	if err := s.d.otherWrite(); err != nil {
		return err
	}
	return s.StableStore.Set(k, v)
}

func (s *stableStore) SetUint64(k []byte, v uint64) error {
	if err := s.d.otherWrite(); err != nil {
		return err
	}
	return s.StableStore.SetUint64(k, v)
}

type snapshotStore struct {
	raft.SnapshotStore
	d *Disk
}

func (s *snapshotStore) Create(version raft.SnapshotVersion, index, term uint64, conf raft.Configuration, confIndex uint64, trans raft.Transport) (raft.SnapshotSink, error) {
	if err := s.d.otherWrite(); err != nil {
		return nil, err
	}
	sink, err := s.SnapshotStore.Create(version, index, term, conf, confIndex, trans)
	if err != nil {
		return nil, err
	}
	return &failingSink{SnapshotSink: sink, d: s.d}, nil
}

// failingSink fails the writes of a snapshot begun before the disk filled up.
type failingSink struct {
	raft.SnapshotSink
	d *Disk
}

var _ io.Writer = (*failingSink)(nil)

func (s *failingSink) Write(p []byte) (int, error) {
	if err := s.d.otherWrite(); err != nil {
		return 0, err
	}
	return s.SnapshotSink.Write(p)
}
