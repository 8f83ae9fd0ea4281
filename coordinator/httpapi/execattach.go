package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/auth"
	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/execsession"
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/execstream"
)

// claimExec hands a session to the client that opened it; any other
// caller, and a second attach, is told it does not exist.
func (s *Server) claimExec(r *http.Request, p auth.Principal) (*execsession.Session, error) {
	id := r.PathValue("id")
	sess, err := s.execs.ClaimClient(id, p.CredentialID)
	if err != nil {
		return nil, fmt.Errorf("exec session %s: %w", id, state.ErrNotFound)
	}
	return sess, nil
}

// attachExec is GET /v1/exec/{id}: the client's end as a WebSocket.
func (s *Server) attachExec(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	sess, err := s.claimExec(r, p)
	if err != nil {
		return err
	}
	conn, err := execstream.Accept(w, r)
	if err != nil {
		s.execs.Close(sess)
		s.log.Info("exec attach was not a WebSocket", "session", sess.ID, "error", err)
		return nil // Accept answered the request
	}
	defer conn.CloseNow()
	s.runExec(r.Context(), sess, conn)
	_ = conn.Close()
	return nil
}

// runExecFile is POST /v1/exec/{id}: the client's end without a
// WebSocket. The body is the whole stdin (at most MaxExecStdinBytes); the
// answer streams the output frames as newline-delimited JSON, the exit
// code (or an error frame) last.
func (s *Server) runExecFile(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	sess, err := s.claimExec(r, p)
	if err != nil {
		return err
	}
	stdin, err := readStdin(r)
	if err != nil {
		s.execs.Close(sess)
		return err
	}
	if sess.TTY {
		s.execs.Close(sess)
		return invalidf("a tty session attaches as a WebSocket")
	}
	_ = http.NewResponseController(w).SetWriteDeadline(time.Time{})
	w.Header().Set("Content-Type", mediaNDJSON)
	noSniff(w)
	w.WriteHeader(http.StatusOK)
	s.runExec(r.Context(), sess, newNDJSONEnd(w, stdin))
	return nil
}

// readStdin reads a non-interactive attach's body, bounded.
func readStdin(r *http.Request) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r.Body, api.MaxExecStdinBytes+1))
	if err != nil {
		return nil, invalidf("reading stdin: %v", err)
	}
	if len(b) > api.MaxExecStdinBytes {
		return nil, newError(api.CodeBodyTooLarge, "stdin exceeds the %d byte cap of a non-interactive exec", api.MaxExecStdinBytes)
	}
	return b, nil
}

// runExec waits for the agent's end, splices the two, and audits how the
// session ended. The session is closed when it returns.
func (s *Server) runExec(parent context.Context, sess *execsession.Session, client execsession.Endpoint) {
	defer s.execs.Close(sess)
	ctx, watchEnded, stop := s.watchExec(parent, sess, client) // execwatch.go
	defer stop()
	var o execsession.Outcome
	agent, err := sess.AwaitAgent(ctx)
	if err != nil {
		o.Err = err
		if watchEnded() == nil {
			_ = client.Write(ctx, api.ExecFrame{Type: api.ExecError, ErrorCode: string(api.CodeConflict),
				Message: "the task's agent did not attach in time (the task may have ended, or the coordinators' leader changed); retry"})
		}
	} else {
		o = execsession.Splice(ctx, client, agent, api.ExecFrame{Type: api.ExecStart, Command: sess.Command, TTY: sess.TTY, Rows: sess.Rows, Cols: sess.Cols})
	}
	if why := watchEnded(); why != nil && !o.Exited {
		o.Err = why
	}
	detail := fmt.Sprintf("exit code %d", o.Code)
	if !o.Exited {
		detail = "ended without an exit code: " + o.Err.Error()
	}
	s.log.Info("exec session ended", "session", sess.ID, "task_id", sess.TaskID, "actor", sess.Actor, "detail", detail)
	ev := s.execAudit(sess, "task.exec.end", detail)
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if _, err := state.Propose[int](actx, s.propose, command.AppendAudit{Events: []command.AuditEvent{ev}}); err != nil {
		s.log.Warn("exec session's end not audited", "session", sess.ID, "error", err)
	}
}

// agentExec is GET /v1/workers/self/exec/{id}: the agent's end, dialled
// by the agent of the task's worker after its heartbeat offered it.
func (s *Server) agentExec(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	id := r.PathValue("id")
	sess, err := s.execs.ClaimAgent(id, p.WorkerID)
	if err != nil {
		return fmt.Errorf("exec session %s: %w", id, state.ErrNotFound)
	}
	conn, err := execstream.Accept(w, r)
	if err != nil {
		s.execs.Close(sess)
		return nil // Accept answered the request
	}
	defer conn.CloseNow()
	if err := sess.Join(r.Context(), conn); err != nil {
		s.execs.Close(sess)
	}
	_ = conn.Close()
	return nil
}

// ndjsonEnd is a non-interactive client's end: it reads the stdin it was
// given, then its end, and writes each frame as a line.
type ndjsonEnd struct {
	mu    sync.Mutex
	w     http.ResponseWriter
	stdin []byte
	eof   bool
}

func newNDJSONEnd(w http.ResponseWriter, stdin []byte) *ndjsonEnd {
	return &ndjsonEnd{w: w, stdin: stdin}
}

func (e *ndjsonEnd) Read(ctx context.Context) (api.ExecFrame, error) {
	if n := min(len(e.stdin), api.MaxExecFrameData); n > 0 {
		f := api.ExecFrame{Type: api.ExecStdin, Data: e.stdin[:n]}
		e.stdin = e.stdin[n:]
		return f, nil
	}
	if !e.eof {
		e.eof = true
		return api.ExecFrame{Type: api.ExecStdinEOF}, nil
	}
	<-ctx.Done() // nothing more comes from this client
	return api.ExecFrame{}, ctx.Err()
}

func (e *ndjsonEnd) Write(_ context.Context, f api.ExecFrame) error {
	b, err := json.Marshal(f)
	if err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, err := e.w.Write(append(b, '\n')); err != nil {
		return err
	}
	return http.NewResponseController(e.w).Flush()
}
