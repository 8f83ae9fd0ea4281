// Package output is the task output's room: the contract every output
// store keeps (Store: one ordered write per Apply, bounded page reads,
// captures and staged restores), the record it holds, the output
// section's line format, and the in-memory store tests and tools use.
// The state machine decides what is kept and hands the store its
// changes; coordinator/outputstore is the coordinator's bbolt store.
// It knows no other room: it imports the standard library and
// internal/countw only.
package output

import (
	"errors"
	"io"
	"time"
)

// Store keeps task output (the chunks AppendLogs carries) outside the
// state's memory. The state decides, inside Apply, what is kept (the
// per-task and total bounds, from counters in the Task records) and hands
// the store one ordered list of changes per Apply call (Write); reads go
// straight to it. Every coordinator applying the same log writes the same
// changes, so every copy holds the same output.
//
// Implementations: the in-memory one here (tests), and package
// outputstore's bbolt file in the coordinator's data dir.
type Store interface {
	// Write applies one Apply call's changes, in order. An error means
	// this coordinator can no longer keep the output the log says it
	// holds: the state treats it as fatal (its flushOutput).
	Write(ops []Op) error
	// Read returns task's records from index from onwards: at least one
	// record when there is one, then more while their data stays within
	// maxBytes (PageTakes).
	Read(taskID string, from, maxBytes int) ([]Record, error)
	// Count is how many records task has.
	Count(taskID string) (int, error)
	// Capture takes a consistent view of the whole output, which later
	// Writes do not change; it is cheap (it copies nothing).
	Capture() (Capture, error)
	// Prepare decodes an output section (as an Capture writes it)
	// into a replacement held aside: nothing visible changes until its
	// Commit, and a section that fails to decode leaves nothing behind.
	Prepare(r io.Reader) (Restore, error)
}

// Op is one change to the output: a record appended to a task, or
// (Delete) everything a task has removed.
type Op struct {
	TaskID string
	Delete bool
	Record Record
}

// Capture is a view of the output at one point in the log.
type Capture interface {
	// WriteTo writes the output section: every record, tasks in byte
	// order of their ids, each task's records in order.
	WriteTo(w io.Writer) (int64, error)
	// Release frees the view. Calls after the first do nothing.
	Release()
}

// Restore is a decoded output section waiting to replace the
// output.
type Restore interface {
	// Tasks lists the tasks the section holds output for.
	Tasks() []string
	// Commit makes the section the output; Discard drops it. One of them
	// must be called, once, but for a Commit that fails: it leaves the
	// output as it was, and Discard is called after it.
	Commit() error
	Discard()
}

// ErrSection is a malformed output section.
var ErrSection = errors.New("malformed output section")

// ErrStorage is an output store that failed to write a restore's
// staging copy: the store's fault, not the snapshot's.
var ErrStorage = errors.New("output storage failed")

// MaxTaskID bounds a task id in an output section (ids are UUIDs;
// the bound only stops a crafted snapshot).
const MaxTaskID = 256

// Record is one stored chunk of task output.
type Record struct {
	Attempt int       `json:"attempt"`
	Stream  string    `json:"stream"`
	Seq     int64     `json:"seq"`
	Data    string    `json:"data"`
	Time    time.Time `json:"time"`
}

// PageTakes is the bound every page of output keeps to (an output
// store's Read, a job's log page): a page takes its first record whatever
// its size, then each next one while the data it holds stays within
// maxBytes. taken is how many records the page holds, size their data,
// next the data of the record it is offered.
func PageTakes(taken, size, next, maxBytes int) bool {
	return taken == 0 || size+next <= maxBytes
}
