package output

import (
	"io"
	"maps"
	"slices"
	"sync"

	"github.com/gpulayer/gpulayer/internal/countw"
)

// Mem is an Store in memory, for tests and tools: its memory
// grows with the output it holds.
type Mem struct {
	mu    sync.RWMutex
	tasks map[string][]Record
}

var _ Store = (*Mem)(nil)

// NewMem returns an empty in-memory output store.
func NewMem() *Mem { return &Mem{tasks: map[string][]Record{}} }

// Write applies ops in order.
func (m *Mem) Write(ops []Op) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, op := range ops {
		if op.Delete {
			delete(m.tasks, op.TaskID)
			continue
		}
		m.tasks[op.TaskID] = append(m.tasks[op.TaskID], op.Record)
	}
	return nil
}

// Read returns task's records from index from, within maxBytes.
func (m *Mem) Read(taskID string, from, maxBytes int) ([]Record, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	recs := m.tasks[taskID]
	from = max(from, 0)
	if from >= len(recs) {
		return nil, nil
	}
	return slices.Clone(recs[from:pageEnd(recs, from, maxBytes)]), nil
}

// pageEnd is where a page of recs starting at from ends (PageTakes).
func pageEnd(recs []Record, from, maxBytes int) int {
	end, size := from, 0
	for end < len(recs) && PageTakes(end-from, size, len(recs[end].Data), maxBytes) {
		size += len(recs[end].Data)
		end++
	}
	return end
}

// Count is how many records task has.
func (m *Mem) Count(taskID string) (int, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.tasks[taskID]), nil
}

// Capture copies the task index (not the records, which never change
// once written: appends after the capture land past each captured
// slice's length).
func (m *Mem) Capture() (Capture, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	view := make(map[string][]Record, len(m.tasks))
	for id, recs := range m.tasks {
		view[id] = recs[:len(recs):len(recs)]
	}
	return memCapture(view), nil
}

// Prepare decodes a section into a fresh map.
func (m *Mem) Prepare(r io.Reader) (Restore, error) {
	next := map[string][]Record{}
	dec := NewDecoder(r)
	for {
		l, err := dec.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		next[l.Task] = append(next[l.Task], l.Record)
	}
	return &memRestore{into: m, next: next}, nil
}

type memCapture map[string][]Record

func (c memCapture) WriteTo(w io.Writer) (int64, error) {
	cw := &countw.Writer{W: w}
	enc := NewEncoder(cw)
	for _, id := range slices.Sorted(maps.Keys(c)) {
		for _, r := range c[id] {
			if err := enc.Encode(id, r); err != nil {
				return cw.N, err
			}
		}
	}
	return cw.N, nil
}

func (memCapture) Release() {}

type memRestore struct {
	into *Mem
	next map[string][]Record
}

func (r *memRestore) Tasks() []string { return slices.Sorted(maps.Keys(r.next)) }

func (r *memRestore) Commit() error {
	r.into.mu.Lock()
	defer r.into.mu.Unlock()
	r.into.tasks = r.next
	return nil
}

func (r *memRestore) Discard() { r.next = nil }
