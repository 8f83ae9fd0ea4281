package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/execstream"
	"github.com/gpulayer/gpulayer/sdk/executor"
)

// execDial bounds the dial and the start frame of a session.
const execDial = 15 * time.Second

// execSessions dials out to the coordinator for each exec session its
// heartbeat answer offers, once each, and runs the command through the
// task's executor. Nothing listens on the worker.
type execSessions struct {
	a   *Agent
	log *slog.Logger

	mu   sync.Mutex
	seen map[string]time.Time // session id: when first offered
}

func newExecSessions(a *Agent) *execSessions {
	return &execSessions{a: a, log: a.log.With("component", "exec"), seen: map[string]time.Time{}}
}

// offer starts the sessions not seen before. A session is offered until
// the agent dials it; one seen longer ago than it can wait is forgotten.
func (e *execSessions) offer(ctx context.Context, offers []api.ExecOffer) {
	now := e.a.cfg.Clock.Now()
	e.mu.Lock()
	for id, at := range e.seen {
		if now.Sub(at) > 2*api.ExecAttachSeconds*time.Second {
			delete(e.seen, id)
		}
	}
	var fresh []api.ExecOffer
	for _, o := range offers {
		if _, ok := e.seen[o.ID]; !ok {
			e.seen[o.ID] = now
			fresh = append(fresh, o)
		}
	}
	e.mu.Unlock()
	for _, o := range fresh {
		go e.serve(ctx, o)
	}
}

// serve dials one session and runs its command.
func (e *execSessions) serve(ctx context.Context, o api.ExecOffer) {
	log := e.log.With("session", o.ID, "task_id", o.TaskID)
	dctx, cancel := context.WithTimeout(ctx, execDial)
	conn, err := e.a.client.DialExec(dctx, o.URL)
	if err != nil {
		cancel()
		log.Warn("exec session: dial the coordinator", "error", err)
		return
	}
	defer conn.CloseNow()
	start, err := conn.Read(dctx)
	cancel()
	if err != nil || start.Type != api.ExecStart {
		log.Warn("exec session: no start frame", "error", err, "type", start.Type)
		return
	}
	code, err := e.run(ctx, o.TaskID, start, conn)
	last := api.ExecFrame{Type: api.ExecExit, Code: code}
	if err != nil {
		log.Info("exec session failed", "error", err)
		last = api.ExecFrame{Type: api.ExecError, ErrorCode: string(errorCodeOf(err)), Message: err.Error()}
	} else {
		log.Info("exec session ended", "exit_code", code)
	}
	wctx, cancel := context.WithTimeout(ctx, execDial)
	defer cancel()
	if conn.Write(wctx, last) == nil {
		_ = conn.Close()
	}
}

// errorCodeOf is the protocol code for a failed exec.
func errorCodeOf(err error) api.Code {
	switch {
	case errors.Is(err, errNotRunningHere), errors.Is(err, executor.ErrUnknownTask):
		return api.CodeConflict
	case errors.Is(err, executor.ErrExecUnsupported):
		return api.CodeInvalidArgument
	}
	return api.CodeInternal
}

var errNotRunningHere = errors.New("the task runs no attempt on this worker now")

// run runs the start frame's command in the task's attempt, carrying
// stdin and resizes from conn and the output to it.
func (e *execSessions) run(ctx context.Context, taskID string, start api.ExecFrame, conn *execstream.Conn) (int, error) {
	name, attemptID, ok := e.a.runner.ExecTarget(taskID)
	if !ok {
		return -1, fmt.Errorf("task %s: %w", taskID, errNotRunningHere)
	}
	ex, err := e.a.cfg.Executors.Get(ctx, name)
	if err != nil {
		return -1, err
	}
	// The connection's reads and writes watch the session's ctx, not the
	// command's: a read or write whose ctx ends closes the connection,
	// and the exit code still has to go out on it once the command
	// ended. The reader ends when serve closes the connection.
	cmdCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	stdinR, stdinW := io.Pipe()
	defer stdinR.Close()
	resize := make(chan executor.TermSize, 4)
	go readExecInput(ctx, cancel, conn, stdinW, resize)
	req := executor.ExecRequest{ID: attemptID, Command: start.Command, TTY: start.TTY,
		Size: executor.TermSize{Rows: uint16(start.Rows), Cols: uint16(start.Cols)}}
	return executor.Exec(cmdCtx, ex, req, executor.ExecStreams{
		Stdin:  stdinR,
		Stdout: frameWriter{ctx, conn, api.ExecStdout},
		Stderr: frameWriter{ctx, conn, api.ExecStderr},
		Resize: resize,
	})
}

// readExecInput passes the client's frames on until the connection ends,
// which ends the command (cancel). A resize the command is not keeping
// up with is dropped for the next.
func readExecInput(ctx context.Context, cancel context.CancelFunc, conn *execstream.Conn, stdin *io.PipeWriter, resize chan<- executor.TermSize) {
	defer cancel()
	defer stdin.Close()
	for {
		f, err := conn.Read(ctx)
		if err != nil {
			return
		}
		switch f.Type {
		case api.ExecStdin:
			if _, err := stdin.Write(f.Data); err != nil {
				return
			}
		case api.ExecStdinEOF:
			_ = stdin.Close()
		case api.ExecResize:
			select {
			case resize <- executor.TermSize{Rows: uint16(f.Rows), Cols: uint16(f.Cols)}:
			default:
			}
		}
	}
}

// frameWriter sends what is written as output frames of a bounded size.
type frameWriter struct {
	ctx    context.Context
	conn   *execstream.Conn
	stream string
}

func (w frameWriter) Write(b []byte) (int, error) {
	for off := 0; off < len(b); off += api.MaxExecFrameData {
		chunk := b[off:min(len(b), off+api.MaxExecFrameData)]
		if err := w.conn.Write(w.ctx, api.ExecFrame{Type: w.stream, Data: chunk}); err != nil {
			return off, err
		}
	}
	return len(b), nil
}
