package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/agent/runner"
	"github.com/gpulayer/gpulayer/agent/spool"
	"github.com/gpulayer/gpulayer/internal/clock"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// fakeSender answers reports as a coordinator would, from a table by
// attempt id (nil: acknowledged), and records what it was sent.
type fakeSender struct {
	mu      sync.Mutex
	answers map[string]error
	sent    []string
}

func (f *fakeSender) answer(attempt string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sent = append(f.sent, attempt)
	return f.answers[attempt]
}

func (f *fakeSender) Finish(_ context.Context, _ string, req api.FinishRequest) (api.Task, error) {
	return api.Task{}, f.answer(req.AttemptID)
}

func (f *fakeSender) Fail(_ context.Context, _ string, req api.FailRequest) (api.Task, error) {
	return api.Task{}, f.answer(req.AttemptID)
}

func (f *fakeSender) set(attempt string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.answers[attempt] = err
}

func (f *fakeSender) calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.sent)
}

func codeErr(c api.Code) error {
	return &api.Error{Code: c, Message: string(c), Status: c.HTTPStatus()}
}

var errDown = &url.Error{Op: "Post", URL: "https://c1:8443", Err: &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}}

func TestClassifyReportAnswers(t *testing.T) {
	cases := []struct {
		err  error
		want verdict
	}{
		{nil, delivered},
		{errDown, unreachable},
		{codeErr(api.CodeNoLeader), unreachable},
		{codeErr(api.CodeRateLimited), unreachable},
		{context.DeadlineExceeded, unreachable},
		{codeErr(api.CodeInternal), failed},
		{codeErr(api.CodeUnauthenticated), failed},
		{codeErr(api.CodeWorkerPending), failed},
		{codeErr(api.CodeStaleAttempt), refused},
		{codeErr(api.CodeNotClaimed), refused},
		{codeErr(api.CodeWrongClaimant), refused},
		{codeErr(api.CodeNotFound), refused},
		{codeErr(api.CodeInvalidArgument), refused},
		{codeErr(api.CodeWorkerRevoked), refused},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprint(tc.err), func(t *testing.T) {
			if got := classify(tc.err); got != tc.want {
				t.Fatalf("classify(%v) = %d, want %d", tc.err, got, tc.want)
			}
		})
	}
}

func newTestQueue(t *testing.T, dir string, send *fakeSender) *reportQueue {
	t.Helper()
	sp, err := spool.Open(dir, spool.Limits{MaxRecords: 3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return newReportQueue(sp, send, clock.NewFake(time.Unix(0, 0)), slog.New(slog.DiscardHandler))
}

func finishOf(task, attempt string) runner.Report {
	return runner.Report{TaskID: task, Finish: &api.FinishRequest{AttemptID: attempt, SubmissionID: attempt + "-finish"}}
}

func pendingAttempts(q *reportQueue) []string {
	var ids []string
	for _, r := range q.spool.Pending() {
		ids = append(ids, r.AttemptID)
	}
	return ids
}

// A report waits in the spool while no coordinator takes it, through a
// restart of the agent, and goes out first when one does; one the
// coordinator refuses for good is dropped, one it failed under is kept.
func TestReportsWaitOutAnOutageAndARestart(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	send := &fakeSender{answers: map[string]error{"a1": errDown, "a2": errDown}}
	q := newTestQueue(t, dir, send)
	for _, rep := range []runner.Report{finishOf("t1", "a1"), {TaskID: "t2", Fail: &api.FailRequest{AttemptID: "a2", Reason: "gpu fault"}}} {
		if err := q.Report(ctx, rep); err != nil {
			t.Fatal(err)
		}
	}
	if ok, _ := q.ready(); ok {
		t.Fatal("ready for new work before the waiting reports were tried")
	}
	if q.pass(ctx) {
		t.Fatal("a pass that reached no coordinator says it settled")
	}
	if got := send.calls(); !slices.Equal(got, []string{"a1"}) {
		t.Fatalf("sent %v, want a1 alone: the pass stops at the first unreachable", got)
	}
	if got := pendingAttempts(q); !slices.Equal(got, []string{"a1", "a2"}) {
		t.Fatalf("pending %v after the outage", got)
	}
	if got := q.taskIDs(); !slices.Equal(got, []string{"t1", "t2"}) {
		t.Fatalf("heartbeat names %v, want the waiting reports' tasks", got)
	}

	// The agent restarts: a new queue over the same directory.
	send2 := &fakeSender{answers: map[string]error{"a2": codeErr(api.CodeStaleAttempt), "a3": codeErr(api.CodeInternal)}}
	q2 := newTestQueue(t, dir, send2)
	if err := q2.Report(ctx, finishOf("t3", "a3")); err != nil {
		t.Fatal(err)
	}
	if q2.pass(ctx) {
		t.Fatal("settled with a record the coordinator failed under")
	}
	if got := send2.calls(); !slices.Equal(got, []string{"a1", "a2", "a3"}) {
		t.Fatalf("sent %v, want the oldest first", got)
	}
	if got := pendingAttempts(q2); !slices.Equal(got, []string{"a3"}) {
		t.Fatalf("pending %v, want a3 alone (a1 acknowledged, a2 refused)", got)
	}
	if ok, _ := q2.ready(); !ok {
		t.Fatal("not ready although every waiting report was tried")
	}
	send2.set("a3", nil)
	if !q2.pass(ctx) || len(pendingAttempts(q2)) != 0 {
		t.Fatalf("pending %v once the coordinator took a3", pendingAttempts(q2))
	}
}

// A full spool takes no new work until deliveries make room, and keeps
// every report it is given.
func TestFullSpoolHoldsNewWork(t *testing.T) {
	ctx := t.Context()
	send := &fakeSender{answers: map[string]error{}}
	for _, a := range []string{"a1", "a2", "a3", "a4"} {
		send.answers[a] = codeErr(api.CodeInternal)
	}
	q := newTestQueue(t, t.TempDir(), send)
	for i, a := range []string{"a1", "a2", "a3", "a4"} {
		if err := q.Report(ctx, finishOf(fmt.Sprint("t", i), a)); err != nil {
			t.Fatal(err)
		}
	}
	q.pass(ctx)
	if n, _ := q.spool.Len(); n != 4 {
		t.Fatalf("%d reports kept past the bound of 3, want all 4", n)
	}
	ok, changed := q.ready()
	if ok {
		t.Fatal("ready with a full spool")
	}
	waited := make(chan error, 1)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { waited <- q.waitReady(wctx) }()
	send.set("a1", nil)
	send.set("a2", nil)
	q.pass(ctx)
	<-changed
	if err := <-waited; err != nil {
		t.Fatalf("waitReady: %v", err)
	}
}

// The queue's loop delivers what is reported to it without being asked.
func TestReportLoopDelivers(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	send := &fakeSender{answers: map[string]error{}}
	q := newTestQueue(t, t.TempDir(), send)
	done := make(chan struct{})
	go func() { defer close(done); q.run(ctx) }()
	if err := q.Report(ctx, finishOf("t1", "a1")); err != nil {
		t.Fatal(err)
	}
	for {
		_, changed := q.ready()
		if n, _ := q.spool.Len(); n == 0 {
			break
		}
		<-changed
	}
	cancel()
	<-done
	if got := send.calls(); !slices.Equal(got, []string{"a1"}) {
		t.Fatalf("sent %v", got)
	}
}
