package outputstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	bolt "go.etcd.io/bbolt"

	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/internal/countw"
)

// Capture opens a read transaction: bbolt's consistent view, which later
// writes do not change. It copies nothing; WriteTo streams from it.
func (s *Store) Capture() (state.OutputCapture, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.db == nil {
		return nil, ErrClosed
	}
	tx, err := s.db.Begin(false)
	if err != nil {
		return nil, fmt.Errorf("outputstore: capture: %w", err)
	}
	return &capture{s: s, tx: tx}, nil
}

type capture struct {
	s  *Store
	tx *bolt.Tx
}

// WriteTo writes the output section, tasks in key (byte) order.
func (c *capture) WriteTo(w io.Writer) (int64, error) {
	cw := &countw.Writer{W: w}
	enc := state.NewOutputEncoder(cw)
	top := c.tx.Bucket(tasksBucket)
	err := top.ForEach(func(task, _ []byte) error {
		id := string(task)
		return top.Bucket(task).ForEach(func(_, v []byte) error {
			var r state.LogRecord
			if err := json.Unmarshal(v, &r); err != nil {
				return fmt.Errorf("outputstore: task %s: %w", id, err)
			}
			c.s.maybeTrim(c.tx.DB(), len(v))
			return enc.Encode(id, r)
		})
	})
	return cw.N, err
}

func (c *capture) Release() { _ = c.tx.Rollback() }

// restoreBatchBytes bounds one transaction of a restore: a bbolt write
// transaction holds its dirty pages in memory until it commits.
const restoreBatchBytes = 4 << 20

// Prepare writes the section into a fresh file beside the output file,
// in bounded transactions; Commit swaps it in.
func (s *Store) Prepare(r io.Reader) (state.OutputRestore, error) {
	next := s.path + ".next"
	db, err := create(next, s.mmap)
	if err != nil {
		return nil, err
	}
	rs := &restore{into: s, path: next, db: db, counts: map[string]int{}}
	if err := rs.fill(r); err != nil {
		rs.Discard()
		return nil, err
	}
	return rs, nil
}

type restore struct {
	into   *Store
	path   string
	db     *bolt.DB
	tasks  []string
	counts map[string]int
}

func (rs *restore) fill(r io.Reader) error {
	dec := state.NewOutputDecoder(r)
	seen := map[string]bool{}
	var ops []state.OutputOp
	size := 0
	flush := func() error {
		err := rs.db.Update(func(tx *bolt.Tx) error { return writeOps(tx, ops) })
		if err == nil {
			count(rs.counts, ops)
			rs.into.trimLocked(rs.db) // no one else writes to the new file
		}
		clear(ops)
		ops, size = ops[:0], 0
		return err
	}
	for {
		l, err := dec.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if !seen[l.Task] {
			seen[l.Task] = true
			rs.tasks = append(rs.tasks, l.Task)
		}
		ops = append(ops, state.OutputOp{TaskID: l.Task, Record: l.LogRecord})
		size += len(l.Data) + 64
		if size >= restoreBatchBytes {
			if err := flush(); err != nil {
				return fmt.Errorf("outputstore: restore: %w", err)
			}
		}
	}
	if err := flush(); err != nil {
		return fmt.Errorf("outputstore: restore: %w", err)
	}
	slices.Sort(rs.tasks)
	return nil
}

func (rs *restore) Tasks() []string { return rs.tasks }

// Commit closes the current file and puts the new one in its place.
func (rs *restore) Commit() error {
	s := rs.into
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.db != nil {
		if err := s.db.Close(); err != nil {
			return fmt.Errorf("outputstore: close: %w", err)
		}
	}
	s.db = rs.db // an open file keeps its contents through the rename
	rs.db = nil
	s.countMu.Lock()
	s.counts = rs.counts
	s.countMu.Unlock()
	if err := os.Rename(rs.path, s.path); err != nil {
		return fmt.Errorf("outputstore: %w", err)
	}
	return nil
}

func (rs *restore) Discard() {
	if rs.db != nil {
		_ = rs.db.Close()
		rs.db = nil
	}
	_ = os.Remove(rs.path)
}
