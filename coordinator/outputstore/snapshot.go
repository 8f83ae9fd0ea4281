package outputstore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"sync/atomic"

	bolt "go.etcd.io/bbolt"

	"github.com/gpulayer/gpulayer/coordinator/state/output"
	"github.com/gpulayer/gpulayer/internal/countw"
)

// Capture opens a read transaction: bbolt's consistent view, which later
// writes do not change. It copies nothing; WriteTo streams from it.
//
// The capture keeps its file open: a restore that swaps another file in
// meanwhile leaves it to the capture to close this one (generation.go).
func (s *Store) Capture() (output.Capture, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	g := s.cur
	if g == nil {
		return nil, ErrClosed
	}
	tx, err := g.db.Begin(false)
	if err != nil {
		return nil, fmt.Errorf("outputstore: capture: %w", err)
	}
	g.acquire()
	return &capture{g: g, tx: tx}, nil
}

type capture struct {
	g        *generation
	tx       *bolt.Tx // nil once released
	released atomic.Bool
}

// ErrReleased is WriteTo's answer on a capture already released.
var ErrReleased = errors.New("outputstore: capture released")

// WriteTo writes the output section, tasks in key (byte) order. Each
// record is stored as json.Marshal writes it (line.go), so its line is
// written as output.Encoder would write it, without decoding it:
// the task id, then the stored record's fields.
func (c *capture) WriteTo(w io.Writer) (int64, error) {
	if c.released.Load() {
		return 0, ErrReleased
	}
	cw := &countw.Writer{W: w}
	var prefix []byte // of the task line names
	var line []byte   // {"task":<id>, then a record's fields and a newline
	head := 0         // the length of line's task part
	err := c.tx.Bucket(recordsBucket).ForEach(func(k, v []byte) error {
		p, _, err := keyPrefix(k)
		if err != nil {
			return fmt.Errorf("%w %x", err, k)
		}
		if !bytes.Equal(p, prefix) {
			if line, err = taskHead(line[:0], p); err != nil {
				return fmt.Errorf("%w %x", err, k)
			}
			prefix, head = append(prefix[:0], p...), len(line)
		}
		if len(v) < 2 || v[0] != '{' {
			return fmt.Errorf("outputstore: record %x is not a JSON object", k)
		}
		if c.g.trimDue(len(v)) {
			trimTx(c.tx)
		}
		line = append(append(line[:head], v[1:]...), '\n')
		_, err = cw.Write(line)
		return err
	})
	return cw.N, err
}

// taskHead appends to dst the start of a section line of the task whose
// key prefix is p: {"task":<its id as JSON>,
func taskHead(dst, p []byte) ([]byte, error) {
	id, err := prefixTask(p)
	if err != nil {
		return dst, err
	}
	quoted, err := json.Marshal(id)
	if err != nil {
		return dst, err
	}
	dst = append(dst, lineTask...)
	return append(append(dst, quoted...), ','), nil
}

// Release ends the read transaction and lets the file go. Only the first
// call does anything: the capture holds one reference to its file, and a
// second release of it would drop the store's own (closing the file the
// store still reads and writes) or one of another capture's.
func (c *capture) Release() {
	if !c.released.CompareAndSwap(false, true) {
		return
	}
	_ = c.tx.Rollback()
	c.tx = nil
	c.g.release()
}

// Prepare writes the section into a fresh file beside the output file,
// in bounded transactions; Commit swaps it in. Each Prepare has a staging
// file of its own (output.db.next-N), so restores may be prepared
// concurrently (an operator's upload while Raft installs a snapshot);
// commits are serialised by the state store's apply lock. A failure to
// write the staging file wraps output.ErrStorage.
func (s *Store) Prepare(r io.Reader) (output.Restore, error) {
	next := fmt.Sprintf("%s%s%d", s.path, stagingSuffix, s.staged.Add(1))
	db, err := create(next, s.mmap)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", output.ErrStorage, err)
	}
	rs := &restore{into: s, path: next, g: newGeneration(db), counts: map[string]int{}}
	if err := rs.fill(r); err != nil {
		rs.Discard()
		return nil, err
	}
	return rs, nil
}

// stagingSuffix, then a number, names a restore's staging file beside the
// output file; Open removes any a crash left.
const stagingSuffix = ".next-"

type restore struct {
	into   *Store
	path   string
	g      *generation // the new file, its reference the restore's until Commit or Discard
	counts map[string]int
	tasks  []string // counts' keys, sorted once the section is read
}

func (rs *restore) fill(r io.Reader) error {
	sr := newSectionReader(r)
	ld := &loader{g: rs.g, counts: rs.counts}
	defer ld.abort()
	for {
		task, record, err := sr.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if err := ld.add(task, record); err != nil {
			return fmt.Errorf("outputstore: restore: %w: %w", output.ErrStorage, err)
		}
	}
	if err := ld.commit(); err != nil {
		return fmt.Errorf("outputstore: restore: %w: %w", output.ErrStorage, err)
	}
	rs.tasks = slices.Sorted(maps.Keys(rs.counts))
	return nil
}

// Tasks lists the tasks the section holds output for, sorted.
func (rs *restore) Tasks() []string { return rs.tasks }

// Commit puts the new file in the current one's place. The current file
// is closed once the captures open on it are released, not here: a
// capture streaming a snapshot may hold it for minutes, and the store
// reads and writes the new file meanwhile.
//
// What can fail (the store closed, the rename) comes first and leaves the
// store as it was, the restore still to Discard; past the rename nothing
// fails.
func (rs *restore) Commit() error {
	s := rs.into
	s.mu.Lock()
	if s.cur == nil {
		s.mu.Unlock()
		return ErrClosed
	}
	// The current file stays open and readable through the rename: the
	// name moves, the open file keeps its contents.
	if err := os.Rename(rs.path, s.path); err != nil {
		s.mu.Unlock()
		return fmt.Errorf("outputstore: %w", err)
	}
	rs.path = "" // Discard has no file left to remove
	old := s.cur
	s.cur = rs.g
	rs.g = nil
	s.countMu.Lock()
	s.counts = rs.counts
	s.countMu.Unlock()
	s.mu.Unlock()
	old.release()
	return nil
}

func (rs *restore) Discard() {
	if rs.g != nil {
		rs.g.release()
		rs.g = nil
	}
	if rs.path != "" {
		_ = os.Remove(rs.path)
	}
}
