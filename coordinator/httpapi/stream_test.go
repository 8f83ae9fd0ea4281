package httpapi

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/auth"
	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// oneNode is a leader that applies proposals straight to its store.
type oneNode struct{}

func (oneNode) ID() string                 { return "c1" }
func (oneNode) IsLeader() bool             { return true }
func (oneNode) Leader() (string, string)   { return "", "c1" }
func (oneNode) Peers() ([]api.Peer, error) { return nil, nil }
func (oneNode) AppliedIndex() uint64       { return 1 }

// streamRig is an API server over a real TCP listener with one running
// task whose output the tests control. done counts log requests that
// returned.
type streamRig struct {
	t      *testing.T
	store  *state.Store
	srv    *httptest.Server
	token  string
	jobID  string
	taskID string
	seq    int64
	logsIn atomic.Int64
	done   chan struct{}
}

func newStreamRig(t *testing.T, limits StreamLimits) *streamRig {
	t.Helper()
	st := state.New()
	admin, err := auth.Mint(api.PrefixClient)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	st.Apply(command.ImportBootstrap{Generation: 1, Now: now, Credentials: []command.CredentialRecord{
		{ID: admin.Token.ID, Kind: string(auth.KindClient), Name: "admin", Roles: []string{auth.RoleAdmin}, Hash: admin.Hash, CreatedAt: now}}})
	rig := &streamRig{t: t, store: st, token: admin.Token.String(), jobID: "j1", taskID: "j1-0", done: make(chan struct{}, 16)}
	apply := func(c command.Command) {
		t.Helper()
		if res := st.Apply(c).(state.Result); res.Err() != nil {
			t.Fatalf("%T: %v", c, res.Err())
		}
	}
	apply(command.RegisterWorker{WorkerID: "w1", Credential: command.CredentialRecord{ID: "wc", Kind: "worker", Name: "w1", Hash: "h", CreatedAt: now},
		Capabilities: []string{"*"}, Executors: []string{"exec"}, Now: now})
	apply(command.SubmitJob{JobID: rig.jobID, TaskIDs: []string{rig.taskID}, Spec: command.JobSpec{Executor: "exec"}, CreatedBy: "admin", Now: now})
	apply(command.AssignTask{TaskID: rig.taskID, WorkerID: "w1", AttemptID: "a1", LeaseSeconds: 30, Now: now})
	apply(command.StartTask{TaskID: rig.taskID, WorkerID: "w1", AttemptID: "a1", Now: now})

	propose := func(_ context.Context, c command.Command) (state.Result, error) {
		return st.Apply(c).(state.Result), nil
	}
	h := New(Config{Store: st, Cluster: oneNode{}, Propose: propose, Streams: limits})
	rig.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		logs := strings.HasSuffix(r.URL.Path, "/logs")
		if logs {
			rig.logsIn.Add(1)
		}
		h.ServeHTTP(w, r)
		if logs {
			rig.done <- struct{}{}
		}
	}))
	t.Cleanup(rig.srv.Close)
	return rig
}

// write appends one chunk of output to the task.
func (r *streamRig) write(data string) {
	r.t.Helper()
	r.seq++
	res := r.store.Apply(command.AppendLogs{TaskID: r.taskID, WorkerID: "w1", AttemptID: "a1", Stream: api.StreamStdout, Seq: r.seq, Data: data, Now: time.Now().UTC()}).(state.Result)
	if res.Err() != nil {
		r.t.Fatal(res.Err())
	}
}

func (r *streamRig) finish() {
	r.t.Helper()
	res := r.store.Apply(command.FinishTask{TaskID: r.taskID, WorkerID: "w1", AttemptID: "a1", ExitCode: 0, Now: time.Now().UTC()}).(state.Result)
	if res.Err() != nil {
		r.t.Fatal(res.Err())
	}
}

// waitDone waits until a log request has returned on the server.
func (r *streamRig) waitDone(within time.Duration, what string) {
	r.t.Helper()
	select {
	case <-r.done:
	case <-time.After(within):
		r.t.Fatalf("%s: the server still holds the stream after %v", what, within)
	}
}

// Finding 6: a follow stream whose client reads nothing stayed open past
// 130 s. A client with a tiny receive window that never reads fills the
// socket buffers; the next write passes its deadline and the server drops
// the stream.
func TestFollowStreamDropsAClientThatDoesNotRead(t *testing.T) {
	rig := newStreamRig(t, StreamLimits{WriteTimeout: 300 * time.Millisecond, MaxLife: time.Hour})
	chunk := strings.Repeat("x", 1<<20-1) + "\n"
	for range 8 {
		rig.write(chunk)
	}
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
		if err != nil {
			return err
		}
		return serr
	}}
	conn, err := d.DialContext(t.Context(), "tcp", rig.srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /v1/jobs/%s/logs?follow=1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n%s: 1\r\n\r\n", rig.jobID, rig.token, api.ProtocolHeader)
	// The client now reads nothing. The job has not ended, so only the
	// write deadline can end the stream.
	rig.waitDone(10*time.Second, "a client that reads nothing")

	// What the server had handed to the kernel still arrives, then the
	// connection ends well short of the 8 MiB the job holds.
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	n, _ := bufio.NewReader(conn).WriteTo(discard{})
	if n >= 8<<20 {
		t.Fatalf("the client received all %d bytes: the stream was not cut", n)
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// A following stream ends at its maximum life with a trailer saying so;
// the SDK reconnects and delivers every entry exactly once until the job
// ends.
func TestFollowStreamMaxLifeAndReconnect(t *testing.T) {
	rig := newStreamRig(t, StreamLimits{WriteTimeout: 5 * time.Second, MaxLife: 100 * time.Millisecond})
	c, err := client.New(client.Config{Addrs: []string{rig.srv.URL}, Token: rig.token})
	if err != nil {
		t.Fatal(err)
	}
	rig.write("one\n")
	var mu sync.Mutex
	var got []string
	seen := make(chan struct{}, 16)
	errc := make(chan error, 1)
	go func() {
		errc <- c.Logs(t.Context(), rig.jobID, true, func(e api.LogEntry) error {
			mu.Lock()
			got = append(got, e.Data)
			mu.Unlock()
			seen <- struct{}{}
			return nil
		})
	}()
	waitSeen := func(what string) {
		t.Helper()
		select {
		case <-seen:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s was not delivered", what)
		}
	}
	waitSeen("the first entry")
	// Wait until the stream has been cut and reopened at least twice.
	deadline := time.Now().Add(10 * time.Second)
	for rig.logsIn.Load() < 3 {
		select {
		case <-rig.done:
		case <-time.After(time.Until(deadline)):
			t.Fatalf("the stream was opened %d times, want 3", rig.logsIn.Load())
		}
	}
	rig.write("two\n")
	waitSeen("an entry written after a reconnect")
	rig.finish()
	select {
	case err := <-errc:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Logs did not return once the job ended")
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(got, "") != "one\ntwo\n" {
		t.Fatalf("delivered %q, want each entry once", got)
	}
}

// A stream of a job that ended says so in its trailer.
func TestFollowStreamTrailerOfAnEndedJob(t *testing.T) {
	rig := newStreamRig(t, StreamLimits{})
	rig.write("only\n")
	rig.finish()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, rig.srv.URL+"/v1/jobs/"+rig.jobID+"/logs?follow=1", nil)
	req.Header.Set("Authorization", "Bearer "+rig.token)
	req.Header.Set(api.ProtocolHeader, "1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	n, _ := bufio.NewReader(resp.Body).WriteTo(discard{})
	if n == 0 || resp.Trailer.Get(api.HeaderStreamEnd) != api.StreamEndJobEnded {
		t.Fatalf("%d bytes, trailer %q", n, resp.Trailer.Get(api.HeaderStreamEnd))
	}
}
