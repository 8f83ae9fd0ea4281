package cluster

import (
	"path/filepath"
	"sync"

	"github.com/hashicorp/raft"

	"github.com/gpulayer/gpulayer/internal/mmaptrim"
)

// logTrimBytes is how many bytes of entries pass through the log store
// between two trims of its mapping.
const logTrimBytes = 8 << 20

// trimmedStore is the Raft log and stable store with its file mapping kept
// small in resident memory. raft-boltdb reads entries through bbolt's
// read-only shared mapping of raft.db: every entry a follower applies or
// the leader sends to a follower is read from there, and the pages it
// touched stay in the process's page tables, so resident memory grew with
// the volume of entries (task output above all) although those pages are
// the kernel's page cache. After every logTrimBytes of entries written or
// read, the store drops the mapping's page-table entries (package
// mmaptrim): the data stays in the page cache and is mapped again when
// read.
//
// bbolt moves its mapping only while a write transaction commits (the
// file grew) or when it closes, and raft-boltdb writes only in StoreLog,
// StoreLogs, DeleteRange, Set and SetUint64. Those, the trim and Close take
// mu, so the mapping the trim finds holds still while it is dropped.
type trimmedStore struct {
	raftStore
	path    string // as /proc/self/maps names it
	mu      sync.Mutex
	closed  bool
	touched mmaptrim.Counter
}

// raftStore is what raft-boltdb's BoltStore is to Raft.
type raftStore interface {
	raft.LogStore
	raft.StableStore
	Close() error
}

// newTrimmedStore wraps s, which keeps its entries in the file at path.
func newTrimmedStore(s raftStore, path string) *trimmedStore {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	t := &trimmedStore{raftStore: s, path: path}
	t.touched.Every = logTrimBytes
	return t
}

func (t *trimmedStore) GetLog(index uint64, l *raft.Log) error {
	err := t.raftStore.GetLog(index, l)
	if err == nil && t.touch(len(l.Data)) && t.mu.TryLock() {
		// A write in progress will trim when it ends, if still due.
		t.trimLocked()
		t.mu.Unlock()
	}
	return err
}

func (t *trimmedStore) StoreLog(l *raft.Log) error { return t.StoreLogs([]*raft.Log{l}) }

func (t *trimmedStore) StoreLogs(logs []*raft.Log) error {
	n := 0
	for _, l := range logs {
		n += len(l.Data)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	err := t.raftStore.StoreLogs(logs)
	if t.touch(n) {
		t.trimLocked()
	}
	return err
}

func (t *trimmedStore) DeleteRange(min, max uint64) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.raftStore.DeleteRange(min, max)
}

func (t *trimmedStore) Set(key, val []byte) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.raftStore.Set(key, val)
}

func (t *trimmedStore) SetUint64(key []byte, val uint64) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.raftStore.SetUint64(key, val)
}

func (t *trimmedStore) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	return t.raftStore.Close()
}

// touch counts n bytes through the mapping and reports whether a trim is
// due.
func (t *trimmedStore) touch(n int) bool { return t.touched.Add(n) }

// trimLocked drops the resident pages of the store's mapping; t.mu is
// held.
func (t *trimmedStore) trimLocked() {
	t.touched.Reset()
	if !t.closed {
		mmaptrim.DropFile(t.path)
	}
}
