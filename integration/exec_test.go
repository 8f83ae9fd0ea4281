package integration

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator"
	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/internal/syncbuf"
	"github.com/gpulayer/gpulayer/plugins/container/containertest"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// runningShellTask submits an exec job running script and waits until
// its output shows "ready"; it returns the task's id and its output so far.
func runningShellTask(t *testing.T, c *client.Client, script string) (string, string) {
	t.Helper()
	cfg, _ := json.Marshal(map[string]any{"command": "sh", "args": []string{"-c", script}})
	job, err := c.SubmitJob(t.Context(), api.JobSpec{Executor: "exec", Config: cfg, MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = c.CancelJob(context.Background(), job.ID) })
	var out string
	coordinatortest.WaitFor(t, 30*time.Second, "the task to be ready", func() bool {
		out = logsOf(t, c, job.ID)
		return strings.Contains(out, "ready")
	})
	j, err := c.Job(t.Context(), job.ID)
	if err != nil || j.Tasks[0].State != api.TaskRunning {
		t.Fatalf("job %+v %v: want its task running", j, err)
	}
	return j.Tasks[0].ID, out
}

// Exec into a running exec task through a real coordinator and agent (the
// exec plugin in its own process): the command runs as the task's uid, in
// its sandbox (its own /tmp), gets stdin, and its output, stderr and exit
// code come back; a TTY session gets a terminal of the size asked and a
// resize; both sessions are audited with their command and exit code.
func TestExecIntoRunningTask(t *testing.T) {
	h := startCoordinator(t)
	admin := h.Client(t, h.AdminToken)
	startAgent(t, h.URL, h.JoinToken, "node-x", "dgxh100")
	taskID, out := runningShellTask(t, admin, `echo "uid=$(id -u)"; echo task-secret > /tmp/marker; echo ready; exec sleep 120`)
	uid := strings.TrimPrefix(strings.SplitN(out, "\n", 2)[0], "uid=")

	var stdout, stderr syncbuf.Buffer
	code, err := admin.Exec(t.Context(), taskID, client.ExecOptions{
		Command: []string{"sh", "-c", `id -u; cat /tmp/marker; cat; echo to-stderr >&2; exit 5`},
		Stdin:   strings.NewReader("from-stdin\n"), Stdout: &stdout, Stderr: &stderr,
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := uid + "\ntask-secret\nfrom-stdin\n"; code != 5 || stdout.String() != want || stderr.String() != "to-stderr\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q; want 5, %q, to-stderr", code, stdout.String(), stderr.String(), want)
	}

	// A TTY session: a terminal of the size asked, then a resize.
	stdinR, stdinW := io.Pipe()
	resize := make(chan client.TermSize, 1)
	var tty syncbuf.Buffer
	done := make(chan error, 1)
	var ttyCode int
	go func() {
		var err error
		ttyCode, err = admin.Exec(t.Context(), taskID, client.ExecOptions{
			Command: []string{"sh", "-c", `tty; stty size; while read x; do stty size; [ "$x" = q ] && exit 9; done`},
			TTY:     true, Size: client.TermSize{Rows: 30, Cols: 100}, Stdin: stdinR, Stdout: &tty, Resize: resize,
		})
		done <- err
	}()
	coordinatortest.WaitFor(t, 30*time.Second, "the first size", func() bool {
		select {
		case err := <-done:
			t.Fatalf("the tty session ended early: %v, exit %d, output %q", err, ttyCode, tty.String())
		default:
		}
		return strings.Contains(tty.String(), "30 100")
	})
	resize <- client.TermSize{Rows: 50, Cols: 120}
	coordinatortest.WaitFor(t, 30*time.Second, "the new size", func() bool {
		_, _ = stdinW.Write([]byte("\n"))
		return strings.Contains(tty.String(), "50 120")
	})
	_, _ = stdinW.Write([]byte("q\n"))
	select {
	case err := <-done:
		if err != nil || ttyCode != 9 || !strings.Contains(tty.String(), "/dev/pts/") {
			t.Fatalf("tty session: %v, exit %d, output %q", err, ttyCode, tty.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the tty session did not end")
	}

	// Both sessions are in the audit log: who, which task, what, how it ended.
	var evs []api.AuditEvent
	coordinatortest.WaitFor(t, 10*time.Second, "the audit entries", func() bool {
		l, err := admin.Audit(t.Context(), client.AuditQuery{Kinds: []string{"task.exec", "task.exec.end"}})
		evs = l.Events
		return err == nil && len(evs) >= 4
	})
	var opened, ended []string
	for _, e := range evs {
		if e.Subject != taskID || e.Actor == "" {
			t.Errorf("audit event %+v: want the task and the actor", e)
		}
		if e.Kind == "task.exec" {
			opened = append(opened, e.Detail)
		} else {
			ended = append(ended, e.Detail)
		}
	}
	if len(opened) != 2 || !strings.Contains(opened[0], `"cat /tmp/marker`) && !strings.Contains(opened[0], `/tmp/marker`) || len(ended) != 2 || ended[0] != "exit code 5" || ended[1] != "exit code 9" {
		t.Fatalf("audit: opened %q, ended %q", opened, ended)
	}
}

// Who may exec, and what is refused: another team, a read-only token
// and a worker are told the task does not exist, as for an unknown task;
// a task that is not running is 409; a command over its bounds is 400.
// The non-interactive attach (POST, stdin in the body) runs a command too.
func TestExecRefusalsAndPlainAttach(t *testing.T) {
	h := startCoordinator(t)
	admin := h.Client(t, h.AdminToken)
	startAgent(t, h.URL, h.JoinToken, "node-y", "dgxh100")
	ctx := t.Context()
	if _, err := admin.CreateTeam(ctx, api.CreateTeamRequest{Name: "vision"}); err != nil {
		t.Fatal(err)
	}
	tokens := map[*client.Client]string{}
	mint := func(name, team string, roles ...string) *client.Client {
		out, err := admin.CreateToken(ctx, api.CreateTokenRequest{Kind: api.TokenKindClient, Name: name, Roles: roles, Team: team})
		if err != nil {
			t.Fatal(err)
		}
		c := h.Client(t, out.Token)
		tokens[c] = out.Token
		return c
	}
	owner := mint("owner", api.DefaultTeam, "submit")
	taskID, _ := runningShellTask(t, owner, `echo ready; exec sleep 120`)
	done, err := owner.SubmitJob(ctx, api.JobSpec{Executor: "exec", Config: json.RawMessage(`{"command":"true"}`)})
	if err != nil {
		t.Fatal(err)
	}
	finished := waitJob(t, owner, done.ID, terminal, "the short job to end").Tasks[0].ID

	reg, err := h.Client(t, h.JoinToken).Register(ctx, api.RegisterRequest{WorkerID: "other-worker", Executors: []string{"exec"}})
	if err != nil {
		t.Fatal(err)
	}
	ok := api.ExecRequest{Command: []string{"true"}}
	for _, c := range []struct {
		name   string
		c      *client.Client
		task   string
		req    api.ExecRequest
		status int
		code   api.Code
	}{
		{"another team", mint("stranger", "vision", "submit"), taskID, ok, 404, api.CodeNotFound},
		{"read-only of the team", mint("viewer", api.DefaultTeam, "read"), taskID, ok, 404, api.CodeNotFound},
		{"a worker", h.Client(t, reg.WorkerToken), taskID, ok, 404, api.CodeNotFound},
		{"an unknown task", owner, "t" + strings.Repeat("0", 16), ok, 404, api.CodeNotFound},
		{"a task that is not running", owner, finished, ok, 409, api.CodeConflict},
		{"no command", owner, taskID, api.ExecRequest{}, 400, api.CodeInvalidArgument},
		{"too many arguments", owner, taskID, api.ExecRequest{Command: make([]string, api.MaxExecArgs+1)}, 400, api.CodeInvalidArgument},
		{"too long a command", owner, taskID, api.ExecRequest{Command: []string{"echo", strings.Repeat("x", api.MaxExecCommandBytes+1)}}, 400, api.CodeInvalidArgument},
		{"a size without a tty", owner, taskID, api.ExecRequest{Command: []string{"true"}, Rows: 10, Cols: 10}, 400, api.CodeInvalidArgument},
		{"a size out of range", owner, taskID, api.ExecRequest{Command: []string{"true"}, TTY: true, Rows: 10, Cols: api.MaxExecTermSize + 1}, 400, api.CodeInvalidArgument},
	} {
		_, err := c.c.OpenExec(ctx, c.task, c.req)
		var ae *api.Error
		if !errors.As(err, &ae) || ae.Status != c.status || ae.Code != c.code {
			t.Errorf("%s: %v, want %d %s", c.name, err, c.status, c.code)
		}
	}
	// Another client cannot attach to the owner's session.
	sess, err := owner.OpenExec(ctx, taskID, api.ExecRequest{Command: []string{"sh", "-c", "cat; echo err >&2; exit 3"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.DialExec(ctx, sess.AttachPath); !client.IsCode(err, api.CodeNotFound) {
		t.Fatalf("another client's attach: %v, want not_found", err)
	}
	// The owner attaches without a WebSocket: stdin in the body, frames back.
	frames := plainAttach(t, h.URL, tokens[owner], sess.AttachPath, "piped-in\n")
	var gotOut, gotErr string
	last := frames[len(frames)-1]
	for _, f := range frames {
		switch f.Type {
		case api.ExecStdout:
			gotOut += string(f.Data)
		case api.ExecStderr:
			gotErr += string(f.Data)
		}
	}
	if gotOut != "piped-in\n" || gotErr != "err\n" || last.Type != api.ExecExit || last.Code != 3 {
		t.Fatalf("plain attach: stdout %q stderr %q last %+v", gotOut, gotErr, last)
	}
}

// plainAttach attaches to a session with a POST: stdin as the body, the
// frames back as lines.
func plainAttach(t *testing.T, base, token, path, stdin string) []api.ExecFrame {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, base+path, strings.NewReader(stdin))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(api.ProtocolHeader, api.ProtocolVersion)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/x-ndjson" {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("plain attach: %d %s", resp.StatusCode, b)
	}
	var frames []api.ExecFrame
	dec := json.NewDecoder(resp.Body)
	for {
		var f api.ExecFrame
		if err := dec.Decode(&f); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		frames = append(frames, f)
	}
	if len(frames) == 0 {
		t.Fatal("plain attach: no frames")
	}
	return frames
}

// Exec into a container task through a real coordinator and agent: docker
// exec, as the task's user, its output and exit code back.
func TestExecIntoContainerTask(t *testing.T) {
	containertest.DockerOrSkip(t)
	h := startCoordinator(t)
	admin := h.Client(t, h.AdminToken)
	startAgent(t, h.URL, h.JoinToken, "node-cx", "dgxh100", agentOpts{containers: true, cdiDir: t.TempDir()})
	cfg, _ := json.Marshal(api.ContainerConfig{Image: containertest.ProbeImage, Args: []string{"id", "echo", "ready", "sleep"}})
	job, err := admin.SubmitJob(t.Context(), api.JobSpec{Executor: "container", Config: cfg, MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = admin.CancelJob(context.Background(), job.ID) })
	var out string
	coordinatortest.WaitFor(t, 60*time.Second, "the container task to be ready", func() bool {
		out = logsOf(t, admin, job.ID)
		return strings.Contains(out, "ready")
	})
	j, err := admin.Job(t.Context(), job.ID)
	if err != nil {
		t.Fatal(err)
	}
	idLine := strings.SplitN(out, "\n", 2)[0]
	var stdout syncbuf.Buffer
	code, err := admin.Exec(t.Context(), j.Tasks[0].ID, client.ExecOptions{Command: []string{"/probe", "id", "cat", "exit", "4"},
		Stdin: strings.NewReader("piped\n"), Stdout: &stdout})
	if err != nil {
		t.Fatal(err)
	}
	if code != 4 || stdout.String() != idLine+"\npiped\n" {
		t.Fatalf("exit %d, stdout %q; want 4, %q and stdin back", code, stdout.String(), idLine)
	}
}

// With three coordinators the client's session and the agent's dial both
// reach the leader through followers (forwarded WebSockets): a client
// that talks to one follower only and an agent that talks to the other
// still meet, and the command's output and exit code come back.
//
// Over TLS too: the forwarded WebSocket must stay HTTP/1.1 on links that
// offer HTTP/2.
func TestExecThroughFollowers(t *testing.T) {
	for _, tls := range []bool{false, true} {
		t.Run(map[bool]string{false: "http", true: "https"}[tls], func(t *testing.T) {
			opts := coordinatortest.Options{Tweak: func(c *coordinator.Config) { c.HeartbeatInterval = 100 * time.Millisecond }}
			if tls {
				opts.TLS = coordinatortest.NewTLS(t, "global")
			}
			execThroughFollowers(t, coordinatortest.StartCluster(t, 3, opts), opts.TLS)
		})
	}
}

func execThroughFollowers(t *testing.T, c *coordinatortest.Cluster, tls *coordinatortest.TLS) {
	caFile := ""
	if tls != nil {
		caFile = tls.CAFile
	}
	leader := c.WaitLeader(15 * time.Second)
	var followers []string
	for _, n := range c.Nodes {
		if n != leader {
			followers = append(followers, n.URL)
		}
	}
	startAgent(t, followers[1], c.JoinToken, "gpu-f", "dgxh100", agentOpts{caFile: caFile})
	admin, err := client.New(client.Config{Addrs: []string{followers[0]}, Token: c.AdminToken, CAFile: caFile, MaxRetryWait: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	taskID, _ := runningShellTask(t, admin, `echo ready; exec sleep 120`)
	var stdout syncbuf.Buffer
	code, err := admin.Exec(t.Context(), taskID, client.ExecOptions{Command: []string{"sh", "-c", "cat; exit 6"},
		Stdin: strings.NewReader("through followers\n"), Stdout: &stdout})
	if err != nil {
		t.Fatal(err)
	}
	if code != 6 || stdout.String() != "through followers\n" {
		t.Fatalf("exit %d, stdout %q", code, stdout.String())
	}
}

// Sessions are bounded: at most MaxExecSessionsPerTask open on a task,
// and a credential opens them at most at ExecRate (here a burst of 3 and
// nearly no refill), each refusal a 429 that opens nothing.
func TestExecSessionBounds(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{Tweak: func(c *coordinator.Config) {
		c.HeartbeatInterval = 100 * time.Millisecond
		c.RateLimits.ExecRate, c.RateLimits.ExecBurst = 0.001, 3
	}})
	admin := h.Client(t, h.AdminToken)
	startAgent(t, h.URL, h.JoinToken, "node-b", "dgxh100")
	taskID, _ := runningShellTask(t, admin, `echo ready; exec sleep 120`)
	req := api.ExecRequest{Command: []string{"true"}}
	for i := range 3 {
		if _, err := admin.OpenExec(t.Context(), taskID, req); err != nil {
			t.Fatalf("session %d: %v", i, err)
		}
	}
	_, err := admin.OpenExec(t.Context(), taskID, req)
	var ae *api.Error
	if !errors.As(err, &ae) || ae.Status != http.StatusTooManyRequests || ae.Code != api.CodeRateLimited {
		t.Fatalf("a fourth session at once: %v, want 429 rate_limited", err)
	}

	// The per-task bound, with the rate out of the way.
	h2 := coordinatortest.Start(t, coordinatortest.Options{Tweak: func(c *coordinator.Config) { c.HeartbeatInterval = 100 * time.Millisecond }})
	admin2 := h2.Client(t, h2.AdminToken)
	startAgent(t, h2.URL, h2.JoinToken, "node-b2", "dgxh100")
	task2, _ := runningShellTask(t, admin2, `echo ready; exec sleep 120`)
	for i := range api.MaxExecSessionsPerTask {
		if _, err := admin2.OpenExec(t.Context(), task2, req); err != nil {
			t.Fatalf("session %d: %v", i, err)
		}
	}
	_, err = admin2.OpenExec(t.Context(), task2, req)
	if !errors.As(err, &ae) || ae.Status != http.StatusTooManyRequests || !strings.Contains(ae.Message, "this task") {
		t.Fatalf("one session over the task's bound: %v, want 429 naming the task", err)
	}
}

// An exec session lives no longer than the token that opened it: revoking
// the token ends a running session (the client gets unauthenticated, the
// command is ended, the audit log says why). Before, a revoked token's
// shell ran on.
func TestExecEndsWhenItsTokenIsRevoked(t *testing.T) {
	h := startCoordinator(t)
	admin := h.Client(t, h.AdminToken)
	startAgent(t, h.URL, h.JoinToken, "node-x", "dgxh100")
	tok, err := admin.CreateToken(t.Context(), api.CreateTokenRequest{Kind: "client", Name: "mallory", Roles: []string{"submit"}})
	if err != nil {
		t.Fatal(err)
	}
	user := h.Client(t, tok.Token)
	taskID, _ := runningShellTask(t, user, `echo ready; exec sleep 120`)
	var stdout syncbuf.Buffer
	done := make(chan error, 1)
	go func() {
		_, err := user.Exec(t.Context(), taskID, client.ExecOptions{Command: []string{"sh", "-c", "echo started; exec sleep 300"}, Stdout: &stdout})
		done <- err
	}()
	coordinatortest.WaitFor(t, 30*time.Second, "the session to run", func() bool { return strings.Contains(stdout.String(), "started") })
	if _, err := admin.RevokeToken(t.Context(), tok.ID); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !client.IsCode(err, api.CodeUnauthenticated) || !strings.Contains(err.Error(), "revoked") {
			t.Fatalf("the session ended with %v, want unauthenticated naming the revocation", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the session of a revoked token runs on")
	}
	coordinatortest.WaitFor(t, 10*time.Second, "the end's audit entry", func() bool {
		l, err := admin.Audit(t.Context(), client.AuditQuery{Kinds: []string{"task.exec.end"}})
		return err == nil && len(l.Events) == 1 && strings.Contains(l.Events[0].Detail, "revoked")
	})
}
