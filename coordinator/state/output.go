package state

import (
	"errors"
	"io"
)

// OutputStore keeps task output (the chunks AppendLogs carries) outside
// the store's memory. The store decides, inside Apply, what is kept (the
// per-task and total bounds, from counters in the Task records) and hands
// the store one ordered list of changes per Apply call (Write); reads go
// straight to it. Every coordinator applying the same log writes the same
// changes, so every copy holds the same output.
//
// Implementations: the in-memory one here (tests), and package
// outputstore's bbolt file in the coordinator's data dir.
type OutputStore interface {
	// Write applies one Apply call's changes, in order. An error means
	// this coordinator can no longer keep the output the log says it
	// holds: the store treats it as fatal (see flushOutput).
	Write(ops []OutputOp) error
	// Read returns task's records from index from onwards: at least one
	// record when there is one, then more while their data stays within
	// maxBytes (PageTakes).
	Read(taskID string, from, maxBytes int) ([]LogRecord, error)
	// Count is how many records task has.
	Count(taskID string) (int, error)
	// Capture takes a consistent view of the whole output, which later
	// Writes do not change; it is cheap (it copies nothing).
	Capture() (OutputCapture, error)
	// Prepare decodes an output section (as an OutputCapture writes it)
	// into a replacement held aside: nothing visible changes until its
	// Commit, and a section that fails to decode leaves nothing behind.
	Prepare(r io.Reader) (OutputRestore, error)
}

// OutputOp is one change to the output: a record appended to a task, or
// (Delete) everything a task has removed.
type OutputOp struct {
	TaskID string
	Delete bool
	Record LogRecord
}

// OutputCapture is a view of the output at one point in the log.
type OutputCapture interface {
	// WriteTo writes the output section: every record, tasks in byte
	// order of their ids, each task's records in order.
	WriteTo(w io.Writer) (int64, error)
	// Release frees the view. Calls after the first do nothing.
	Release()
}

// OutputRestore is a decoded output section waiting to replace the
// output.
type OutputRestore interface {
	// Tasks lists the tasks the section holds output for.
	Tasks() []string
	// Commit makes the section the output; Discard drops it. One of them
	// must be called, once, but for a Commit that fails: it leaves the
	// output as it was, and Discard is called after it.
	Commit() error
	Discard()
}

// ErrOutputSection is a malformed output section.
var ErrOutputSection = errors.New("malformed output section")

// ErrOutputStorage is an output store that failed to write a restore's
// staging copy: the store's fault, not the snapshot's.
var ErrOutputStorage = errors.New("output storage failed")

// MaxOutputTaskID bounds a task id in an output section (ids are UUIDs;
// the bound only stops a crafted snapshot).
const MaxOutputTaskID = 256
