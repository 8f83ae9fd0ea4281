package httpapi

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gpulayer/gpulayer/coordinator/auth"
	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/execsession"
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// execOpen may reach the open route: any client or worker credential, so
// that every caller but a submit client of the job's team or an admin is
// told the task does not exist (404), never that it exists and is not
// theirs.
var execOpen = Access{Kind: auth.KindClient, Role: auth.RoleRead, Also: auth.KindWorker}

// openExec is POST /v1/tasks/{id}/exec: a session for a command in a
// running task, which the client then attaches to (execattach.go).
func (s *Server) openExec(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	var req api.ExecRequest
	if _, err := decodeRequest(r, &req, false); err != nil {
		return err
	}
	if err := validateExec(req); err != nil {
		return err
	}
	id := r.PathValue("id")
	task, team, err := s.execTarget(p, id)
	if err != nil {
		return err
	}
	if !task.Running() {
		return newError(api.CodeConflict, "task %s is %s, not running: exec needs a running task", id, task.State)
	}
	if ok, wait := s.execLimit.Allow(p.CredentialID, s.now()); !ok {
		return rateLimited("opening exec sessions with this credential", wait)
	}
	sess, err := s.execs.Open(execsession.Spec{
		TaskID: id, WorkerID: task.WorkerID, Team: team, Actor: p.Name, CredentialID: p.CredentialID,
		Command: req.Command, TTY: req.TTY, Rows: req.Rows, Cols: req.Cols,
	})
	if err != nil {
		return &apiError{code: api.CodeRateLimited, msg: err.Error() + "; retry once one ends", retryAfter: 1}
	}
	ev := s.execAudit(sess, "task.exec", "command "+quoteCommand(req.Command))
	ev.Source = sourceString(r)
	if _, err := state.Propose[int](r.Context(), s.propose, command.AppendAudit{Events: []command.AuditEvent{ev}}); err != nil {
		s.execs.Close(sess)
		return err
	}
	writeJSON(w, http.StatusCreated, api.ExecSession{ID: sess.ID, TaskID: id, AttachPath: execsession.ClientPath(sess.ID),
		ExpiresAt: api.FormatTime(sess.Deadline)})
	return nil
}

// execTarget finds the task for an exec and checks who asks: a submit
// client of the job's team, or an admin. Anyone else is told it does not
// exist, in the same words as a task that does not.
func (s *Server) execTarget(p auth.Principal, id string) (state.Task, string, error) {
	notFound := fmt.Errorf("task %s: %w", id, state.ErrNotFound)
	task, err := s.store.Task(id)
	if err != nil {
		return state.Task{}, "", notFound
	}
	access, err := s.store.JobAccessOf(task.JobID)
	if err != nil || !p.HasRole(auth.RoleSubmit) || !p.SeesTeam(access.Team) {
		return state.Task{}, "", notFound
	}
	return task, access.Team, nil
}

// validateExec bounds an exec request.
func validateExec(req api.ExecRequest) error {
	if len(req.Command) == 0 || req.Command[0] == "" {
		return invalidf("command must name a program")
	}
	if len(req.Command) > api.MaxExecArgs {
		return invalidf("command has %d arguments; at most %d", len(req.Command), api.MaxExecArgs)
	}
	total := 0
	for i, a := range req.Command {
		total += len(a)
		if strings.ContainsRune(a, 0) || !utf8.ValidString(a) {
			return invalidf("command[%d] must be UTF-8 text without NUL", i)
		}
	}
	if total > api.MaxExecCommandBytes {
		return invalidf("command is %d bytes; at most %d", total, api.MaxExecCommandBytes)
	}
	if !req.TTY && (req.Rows != 0 || req.Cols != 0) {
		return invalidf("rows and cols are for tty sessions only")
	}
	if err := execsession.TermSize(req.Rows, req.Cols, true); err != nil {
		return invalidf("rows and cols must both be 1 to %d (or both absent)", api.MaxExecTermSize)
	}
	return nil
}

// execAudit is an audit event about a session.
func (s *Server) execAudit(sess *execsession.Session, kind, detail string) command.AuditEvent {
	return command.AuditEvent{Time: s.now(), Kind: kind, Actor: sess.Actor, CredentialID: sess.CredentialID, CredentialKind: string(auth.KindClient),
		WorkerID: sess.WorkerID, Subject: sess.TaskID, Team: sess.Team, Route: "POST /v1/tasks/{id}/exec", Detail: detail}
}

// quoteCommand renders a command for the audit log, each argument quoted
// and the whole cut to a bound.
func quoteCommand(cmd []string) string {
	parts := make([]string, len(cmd))
	for i, a := range cmd {
		parts[i] = strconv.Quote(a)
	}
	out := strings.Join(parts, " ")
	if len(out) > 1024 {
		out = out[:1024] + "…"
	}
	return out
}
