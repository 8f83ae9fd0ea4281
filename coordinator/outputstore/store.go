package outputstore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/state/output"
	bolt "go.etcd.io/bbolt"
)

// FileName is the output file's name in the data dir.
const FileName = "output.db"

// DefaultMmapBytes is the address space mapped for the file up front: while
// the file stays smaller, a snapshot's long read transaction never holds
// up the writes of Apply (bbolt remaps, under an exclusive lock, only when
// the file outgrows its mapping). It is address space, not memory.
const DefaultMmapBytes = min(8<<30, math.MaxInt)

// recordsBucket holds every record, under its key (key.go).
var recordsBucket = []byte("records")

// Store is a bbolt OutputStore.
type Store struct {
	path string
	mmap int

	mu      sync.RWMutex // guards cur and closing
	cur     *generation  // swapped by a restore; nil once closed
	closing *generation  // the file Close took away, for a later Close to wait on

	// closeWaits, when set (by tests), is called as each Close begins to
	// wait for the file's last holder.
	closeWaits func()

	// staged numbers restores' staging files (Prepare).
	staged atomic.Uint64

	// writeMu serialises Write, so that counts follow the file's order.
	writeMu sync.Mutex

	// counts is each task's record count, kept in memory (it grows with
	// the tasks, not their output) so that Count, which a log reader asks
	// of every task of a job at each change, opens no transaction.
	countMu sync.RWMutex
	counts  map[string]int
}

var _ output.Store = (*Store)(nil)

// Options tune Open; zero values take the defaults.
type Options struct {
	// MmapBytes is bbolt's initial mapping (DefaultMmapBytes).
	MmapBytes int
}

// Open empties (or creates) the output file at path and opens it, and
// removes restores' staging files a crash left beside it.
func Open(path string, opts Options) (*Store, error) {
	if opts.MmapBytes <= 0 {
		opts.MmapBytes = DefaultMmapBytes
	}
	if err := removeStaging(path); err != nil {
		return nil, err
	}
	db, err := create(path, opts.MmapBytes)
	if err != nil {
		return nil, err
	}
	return &Store{path: path, mmap: opts.MmapBytes, cur: newGeneration(db), counts: map[string]int{}}, nil
}

// removeStaging removes the staging files of restores beside the output
// file at path (output.db.next-N, and output.db.next, the one name they
// had before they were numbered).
func removeStaging(path string) error {
	dir, base := filepath.Split(path)
	entries, err := os.ReadDir(filepath.Clean(dir))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("outputstore: %w", err)
	}
	for _, e := range entries {
		if name := e.Name(); name == base+".next" || strings.HasPrefix(name, base+stagingSuffix) {
			if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("outputstore: %w", err)
			}
		}
	}
	return nil
}

// create removes whatever is at path and opens a fresh file there.
func create(path string, mmap int) (*bolt.DB, error) {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("outputstore: %w", err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{
		Timeout:         time.Second,
		NoSync:          true,
		NoFreelistSync:  true,
		FreelistType:    bolt.FreelistMapType,
		InitialMmapSize: mmap,
	})
	if err != nil {
		return nil, fmt.Errorf("outputstore: open %s: %w", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists(recordsBucket)
		return err
	})
	if err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("outputstore: %w", err)
	}
	return db, nil
}

// Close closes the file (its contents are rebuilt at the next Open). It
// returns once the file is closed: after every capture still open on it
// is released. A later Close waits for the same and gives the same answer.
func (s *Store) Close() error {
	s.mu.Lock()
	g, first := s.cur, s.cur != nil
	if first {
		s.closing, s.cur = g, nil
	} else {
		g = s.closing
	}
	s.mu.Unlock()
	if g == nil {
		return nil
	}
	if first {
		g.release() // the store's reference
	}
	if s.closeWaits != nil {
		s.closeWaits()
	}
	return g.wait()
}

// ErrClosed is the answer of a store after Close.
var ErrClosed = errors.New("outputstore: closed")

// Write applies ops in one transaction.
func (s *Store) Write(ops []output.Op) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.cur == nil {
		return ErrClosed
	}
	g := s.cur
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	// Only Write (under writeMu) and a restore's Commit (which the read
	// lock keeps out) change counts: it can be read here without countMu.
	var next map[string]int
	if err := g.db.Update(func(tx *bolt.Tx) (err error) {
		next, err = writeOps(tx, ops, s.counts)
		return err
	}); err != nil {
		return err
	}
	s.countMu.Lock()
	for task, n := range next {
		if n == 0 {
			delete(s.counts, task)
		} else {
			s.counts[task] = n
		}
	}
	s.countMu.Unlock()
	n := 0
	for _, op := range ops {
		n += len(op.Record.Data)
	}
	if g.trimDue(n) {
		trimDB(g.db) // not inside Update: its new pages may lie past the mapping
	}
	return nil
}

// writeOps applies ops in tx and returns the record count of each task
// they touched (0 once deleted). counts is each task's count before them
// (it is not changed here): a task's next record goes under the index its
// count is.
func writeOps(tx *bolt.Tx, ops []output.Op, counts map[string]int) (map[string]int, error) {
	b := tx.Bucket(recordsBucket)
	next := map[string]int{} // the counts ops changed so far
	for _, op := range ops {
		if op.Delete {
			next[op.TaskID] = 0
			if err := deleteTask(b, op.TaskID); err != nil {
				return nil, err
			}
			continue
		}
		n, ok := next[op.TaskID]
		if !ok {
			n = counts[op.TaskID]
		}
		if err := putRecord(b, recordKey(op.TaskID, uint64(n)), op.Record); err != nil {
			return nil, err
		}
		next[op.TaskID] = n + 1
	}
	return next, nil
}

// deleteBatch is how many keys deleteTask collects before it deletes
// them.
const deleteBatch = 1024

// deleteTask removes task's records. It collects a batch of keys, then
// deletes them, and so on: deleting behind a cursor is not safe (its
// Next may step over a key), and seeking again from the task's first
// key after each delete would walk the leaves the deletes emptied, which
// stay in the tree until the commit (quadratic in the records).
func deleteTask(b *bolt.Bucket, task string) error {
	prefix := taskPrefix(task)
	keys := make([][]byte, 0, deleteBatch)
	from := prefix
	for {
		keys = keys[:0]
		c := b.Cursor()
		for k, _ := c.Seek(from); isRecordOf(k, prefix) && len(keys) < deleteBatch; k, _ = c.Next() {
			keys = append(keys, bytes.Clone(k))
		}
		for _, k := range keys {
			if err := b.Delete(k); err != nil {
				return err
			}
		}
		if len(keys) < deleteBatch {
			return nil
		}
		from = keys[len(keys)-1] // deleted: the seek finds the key after it
	}
}

// isRecordOf reports whether k is the key of a record of the task whose
// prefix (taskPrefix) is given.
func isRecordOf(k, prefix []byte) bool {
	return len(k) == len(prefix)+indexLen && bytes.HasPrefix(k, prefix)
}

// putRecord stores r under k, as json.Marshal writes it: the form a
// capture writes out unchanged (doc.go).
func putRecord(b *bolt.Bucket, k []byte, r output.Record) error {
	v, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return b.Put(k, v)
}

// Read returns task's records from index from, within maxBytes.
func (s *Store) Read(taskID string, from, maxBytes int) ([]output.Record, error) {
	if from < 0 {
		from = 0
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.cur == nil {
		return nil, ErrClosed
	}
	var out []output.Record
	size := 0
	g := s.cur
	err := g.db.View(func(tx *bolt.Tx) error {
		prefix := taskPrefix(taskID)
		c := tx.Bucket(recordsBucket).Cursor()
		for k, v := c.Seek(appendIndex(prefix, uint64(from))); isRecordOf(k, prefix); k, v = c.Next() {
			var r output.Record
			if err := json.Unmarshal(v, &r); err != nil {
				return fmt.Errorf("outputstore: task %s record %x: %w", taskID, k[len(prefix):], err)
			}
			if !output.PageTakes(len(out), size, len(r.Data), maxBytes) {
				break
			}
			size += len(r.Data)
			out = append(out, r)
		}
		if g.trimDue(size) {
			trimTx(tx)
		}
		return nil
	})
	return out, err
}

// Count is how many records task has.
func (s *Store) Count(taskID string) (int, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.cur == nil {
		return 0, ErrClosed
	}
	s.countMu.RLock()
	defer s.countMu.RUnlock()
	return s.counts[taskID], nil
}
