package executor

import (
	"context"
	"errors"
	"io"
)

// ExecRequest is a command to run inside a running task's sandbox, as
// the task's user (gpulayer job exec).
type ExecRequest struct {
	// ID is the attempt id the task was started under.
	ID      string
	Command []string
	// TTY runs the command on a pseudo-terminal of Size (zero: 24x80);
	// its output then all goes to Stdout.
	TTY  bool
	Size TermSize
}

// TermSize is a terminal's size.
type TermSize struct{ Rows, Cols uint16 }

// ExecStreams are an exec's input and output, supplied by the caller.
type ExecStreams struct {
	// Stdin is the command's input; its EOF closes the command's stdin.
	Stdin io.Reader
	// Stdout and Stderr receive the output; each is written from one
	// goroutine at a time.
	Stdout, Stderr io.Writer
	// Resize delivers new terminal sizes (TTY only; may be nil).
	Resize <-chan TermSize
}

// Execer is implemented by executors that can run a command inside a
// running task (exec into its namespaces, docker exec). Exec returns the
// command's exit code once it ended and its output was written; ctx
// ending kills the command. An id that runs no task is ErrUnknownTask.
type Execer interface {
	Exec(ctx context.Context, req ExecRequest, streams ExecStreams) (int, error)
}

// ErrExecUnsupported is returned by an executor that cannot exec.
var ErrExecUnsupported = errors.New("executor: exec is not supported by this executor")

// Exec runs req through ex if it can exec.
func Exec(ctx context.Context, ex Executor, req ExecRequest, streams ExecStreams) (int, error) {
	e, ok := ex.(Execer)
	if !ok {
		return -1, ErrExecUnsupported
	}
	return e.Exec(ctx, req, streams)
}
