package spool

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gpulayer/gpulayer/internal/atomicfile"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// Record is one attempt's report, waiting to be acknowledged. Exactly one
// of Finish and Fail is set.
type Record struct {
	TaskID    string             `json:"task_id"`
	AttemptID string             `json:"attempt_id"`
	Finish    *api.FinishRequest `json:"finish,omitempty"`
	Fail      *api.FailRequest   `json:"fail,omitempty"`
	// LastLogSeq is the sequence number of the attempt's last log chunk
	// the agent sent, or tried to send, before the report.
	LastLogSeq int64     `json:"last_log_seq"`
	WrittenAt  time.Time `json:"written_at"`
}

// Errors.
var (
	// ErrBadRecord refuses a record that names no task or attempt, or
	// carries neither or both of a finish and a failure.
	ErrBadRecord = errors.New("spool: a record names its task and attempt and carries one finish or one failure")
)

// Limits bound a spool; zero fields take the defaults.
type Limits struct {
	// MaxRecords is how many records the spool holds before it is full
	// (default 1024).
	MaxRecords int
	// MaxBytes is how many bytes of records it holds before it is full
	// (default 64 MiB).
	MaxBytes int64
}

// Default limits.
const (
	DefaultMaxRecords = 1024
	DefaultMaxBytes   = 64 << 20
)

// Spool is a directory of records. It is safe for concurrent use.
type Spool struct {
	dir    string
	limits Limits

	mu      sync.Mutex
	next    uint64            // the next record's sequence number
	entries map[string]*entry // by attempt id
	bytes   int64             // the records' total size on disk
}

type entry struct {
	rec  Record
	seq  uint64
	file string // its name in dir
	size int64
}

// Open opens the spool in dir, making the directory (0700) if need be, and
// loads the records a previous run left. A file that cannot be read as a
// record (the disk corrupted it) is set aside under a ".bad" name and
// logged, so that it neither blocks the others nor is lost from sight.
func Open(dir string, limits Limits, log *slog.Logger) (*Spool, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	limits.MaxRecords = cmp.Or(limits.MaxRecords, DefaultMaxRecords)
	limits.MaxBytes = cmp.Or(limits.MaxBytes, DefaultMaxBytes)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	s := &Spool{dir: dir, limits: limits, entries: map[string]*entry{}}
	names, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	for _, de := range names {
		name := de.Name()
		if strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".json") {
			continue // a temporary file a crash left, or set aside
		}
		e, err := load(dir, name)
		if err != nil {
			log.Error("spool: a record cannot be read; set aside", "file", filepath.Join(dir, name), "error", err)
			_ = os.Rename(filepath.Join(dir, name), filepath.Join(dir, "."+name+".bad"))
			continue
		}
		if old, dup := s.entries[e.rec.AttemptID]; dup && old.seq > e.seq {
			_ = os.Remove(filepath.Join(dir, e.file))
			continue
		} else if dup {
			_ = os.Remove(filepath.Join(dir, old.file))
			s.bytes -= old.size
		}
		s.entries[e.rec.AttemptID] = e
		s.bytes += e.size
		s.next = max(s.next, e.seq+1)
	}
	return s, nil
}

// Peek reads the records in dir without changing anything there: for a
// spool another process owns (an operator's look, a test's). Records are
// written whole and renamed into place, so a concurrent writer is never
// seen half-way; a file that cannot be read as a record is skipped, and a
// missing directory holds no records.
func Peek(dir string) ([]Record, error) {
	des, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	var out []Record
	for _, de := range des {
		name := de.Name()
		if strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".json") {
			continue
		}
		if e, err := load(dir, name); err == nil {
			out = append(out, e.rec)
		}
	}
	return out, nil
}

// load reads one record file, named <seq>-<digest>.json.
func load(dir, name string) (*entry, error) {
	seqText, _, ok := strings.Cut(name, "-")
	seq, err := strconv.ParseUint(seqText, 10, 64)
	if !ok || err != nil {
		return nil, errors.New("not a record's name")
	}
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return nil, err
	}
	var rec Record
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, err
	}
	if err := rec.check(); err != nil {
		return nil, err
	}
	if name != fileName(seq, rec.AttemptID) {
		return nil, errors.New("its name does not match its attempt")
	}
	return &entry{rec: rec, seq: seq, file: name, size: int64(len(b))}, nil
}

func (r Record) check() error {
	if r.TaskID == "" || r.AttemptID == "" || (r.Finish == nil) == (r.Fail == nil) {
		return ErrBadRecord
	}
	return nil
}

// fileName names a record's file: its sequence number, so that names sort
// in the order records were put, and a digest of its attempt id, which
// the name must not carry as it is.
func fileName(seq uint64, attemptID string) string {
	sum := sha256.Sum256([]byte(attemptID))
	return fmt.Sprintf("%020d-%s.json", seq, hex.EncodeToString(sum[:12]))
}

// Put writes rec durably, replacing an earlier record of the same
// attempt, and returns once it is on disk. It keeps rec whatever the
// bounds say (see Full).
func (s *Spool) Put(rec Record) error {
	if err := rec.check(); err != nil {
		return err
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e := &entry{rec: rec, seq: s.next, size: int64(len(b))}
	e.file = fileName(e.seq, rec.AttemptID)
	if err := writeDurably(s.dir, e.file, b); err != nil {
		return err
	}
	s.next++
	if old, ok := s.entries[rec.AttemptID]; ok {
		_ = os.Remove(filepath.Join(s.dir, old.file))
		s.bytes -= old.size
	}
	s.entries[rec.AttemptID] = e
	s.bytes += e.size
	return nil
}

// Remove forgets an attempt's record: it was acknowledged, or refused for
// good. Removing one that is not there does nothing.
func (s *Spool) Remove(attemptID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.entries[attemptID]
	if !ok {
		return nil
	}
	if err := os.Remove(filepath.Join(s.dir, e.file)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("spool: %w", err)
	}
	delete(s.entries, attemptID)
	s.bytes -= e.size
	return syncDir(s.dir)
}

// Pending returns the records, oldest first.
func (s *Spool) Pending() []Record {
	s.mu.Lock()
	es := make([]*entry, 0, len(s.entries))
	for _, e := range s.entries {
		es = append(es, e)
	}
	s.mu.Unlock()
	slices.SortFunc(es, func(a, b *entry) int { return cmp.Compare(a.seq, b.seq) })
	out := make([]Record, len(es))
	for i, e := range es {
		out[i] = e.rec
	}
	return out
}

// Len is how many records the spool holds, and their size in bytes.
func (s *Spool) Len() (records int, bytes int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.entries), s.bytes
}

// Full reports whether the spool holds as many records or bytes as its
// limits allow: the agent then takes no new task until some are
// delivered.
func (s *Spool) Full() bool {
	n, b := s.Len()
	return n >= s.limits.MaxRecords || b >= s.limits.MaxBytes
}

// writeDurably writes data to dir/name whole (atomicfile: a temporary
// file, synced, renamed into place) and syncs the directory, so that the
// name survives a crash.
func writeDurably(dir, name string, data []byte) error {
	if err := atomicfile.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	return syncDir(dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("spool: sync %s: %w", dir, err)
	}
	return nil
}
