package client

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// noLeaderServer answers every request as a coordinator without a leader
// does, and counts them.
func noLeaderServer(t *testing.T) (string, *atomic.Int32) {
	t.Helper()
	n := new(atomic.Int32)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"error":{"code":"no_leader","message":"coordinator c3 knows no leader: the cluster has no quorum, or is electing a leader; retry","request_id":"r1"}}`))
	}))
	t.Cleanup(srv.Close)
	return srv.URL, n
}

// closedAddr returns the URL of a port nothing listens on any more.
func closedAddr(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close()
	return srv.URL
}

// silentListener takes connections, reads what is sent and never
// answers (a coordinator that hangs); it counts the connections.
func silentListener(t *testing.T) (string, *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	n := new(atomic.Int32)
	var mu sync.Mutex
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			go func() { _, _ = io.Copy(io.Discard, c) }()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return "http://" + ln.Addr().String(), n
}

// generous bounds each call of these tests: far above what an answer
// takes, so the only timing claim is "it returned before this".
func generous(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// wantNoQuorum checks that err is one NoQuorumError naming every address
// of want with what it said, and that the call returned before ctx ended.
func wantNoQuorum(t *testing.T, ctx context.Context, err error, want map[string]string) *NoQuorumError {
	t.Helper()
	if ctx.Err() != nil {
		t.Fatalf("the call returned only once its context ended: %v", err)
	}
	var nq *NoQuorumError
	if !errors.As(err, &nq) || !errors.Is(err, ErrNoQuorum) || !Unavailable(err) {
		t.Fatalf("error %v (%T), want a NoQuorumError", err, err)
	}
	if len(nq.Tries) != len(want) {
		t.Errorf("tries %+v, want one per address of %v", nq.Tries, want)
	}
	msg := err.Error()
	if !strings.Contains(msg, "no coordinator leader or quorum is reachable") {
		t.Errorf("error %q does not say that no leader or quorum is reachable", msg)
	}
	for _, tr := range nq.Tries {
		said, ok := want[tr.Addr]
		if !ok {
			t.Errorf("tried %s, not one of %v", tr.Addr, want)
			continue
		}
		if !strings.Contains(tr.Said(), said) {
			t.Errorf("%s said %q, want %q in it", tr.Addr, tr.Said(), said)
		}
		if !strings.Contains(msg, tr.Addr+": "+tr.Said()) {
			t.Errorf("error %q does not name %s with what it said", msg, tr.Addr)
		}
	}
	return nq
}

// With every coordinator failing a call in its own way (an answer without
// a leader, a port nothing listens on, a listener that never answers), a
// fail-fast client gives up after one round and a short wait, with one
// error that names each address and what it said.
func TestNoQuorumNamesEveryAddressAndWhatItSaid(t *testing.T) {
	noLeader, _ := noLeaderServer(t)
	closed := closedAddr(t)
	silent, _ := silentListener(t)
	addrs := []string{noLeader, closed, silent}
	c, err := New(Config{Addrs: addrs, Token: "glc_x", MaxRetryWait: time.Hour, FailFast: true, AnswerTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx := generous(t)
	_, err = c.Jobs(ctx, 1)
	t.Log(err)
	nq := wantNoQuorum(t, ctx, err, map[string]string{
		noLeader: "answered 503 no_leader: coordinator c3 knows no leader",
		closed:   "refused the connection",
		silent:   "sent no answer within 300ms",
	})
	for i, tr := range nq.Tries {
		if tr.Addr != addrs[i] {
			t.Errorf("tries in the order %+v, want the configured order %v", nq.Tries, addrs)
			break
		}
	}
	if !IsCode(err, api.CodeNoLeader) {
		t.Errorf("IsCode(%v, no_leader) = false, want the no_leader answer readable", err)
	}
}

// A write that is not idempotent is resent only where it cannot have
// taken effect: a refused dial, an answer of no leader. Sent to a
// coordinator that then says nothing, it is not resent: its outcome is
// unknown, and the call says so rather than naming the others.
func TestNoQuorumKeepsTheRulesForWritesThatAreNotIdempotent(t *testing.T) {
	t.Run("refused and no leader", func(t *testing.T) {
		noLeader, calls := noLeaderServer(t)
		closed := closedAddr(t)
		c, err := New(Config{Addrs: []string{closed, noLeader}, Token: "glc_x", MaxRetryWait: time.Hour, FailFast: true})
		if err != nil {
			t.Fatal(err)
		}
		ctx := generous(t)
		_, err = c.Fail(ctx, "t1", api.FailRequest{AttemptID: "a1", Reason: "could not run"}) // not idempotent: SubmitJob keys every spec
		wantNoQuorum(t, ctx, err, map[string]string{closed: "refused the connection", noLeader: "answered 503 no_leader"})
		if calls.Load() == 0 {
			t.Error("the coordinator without a leader was never asked")
		}
	})
	t.Run("sent, then no answer", func(t *testing.T) {
		closed := closedAddr(t)
		silent, conns := silentListener(t)
		noLeader, calls := noLeaderServer(t)
		c, err := New(Config{Addrs: []string{closed, silent, noLeader}, Token: "glc_x", MaxRetryWait: time.Hour, FailFast: true, AnswerTimeout: 300 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		ctx := generous(t)
		_, err = c.Fail(ctx, "t1", api.FailRequest{AttemptID: "a1", Reason: "could not run"}) // not idempotent: SubmitJob keys every spec
		if ctx.Err() != nil || !errors.Is(err, ErrOutcomeUnknown) || errors.Is(err, ErrNoQuorum) {
			t.Fatalf("fail = %v, want ErrOutcomeUnknown (sent, no answer)", err)
		}
		if !strings.Contains(err.Error(), silent) {
			t.Errorf("error %q does not name %s, where the write went", err, silent)
		}
		if conns.Load() > 1 || calls.Load() != 0 {
			t.Errorf("the write reached the silent coordinator %d times and the next %d times, want once and never", conns.Load(), calls.Load())
		}
	})
}

// A client that waits (no FailFast) keeps retrying for MaxRetryWait, then
// gives the same one error naming every address.
func TestNoQuorumAfterMaxRetryWait(t *testing.T) {
	noLeader, calls := noLeaderServer(t)
	closed := closedAddr(t)
	c, err := New(Config{Addrs: []string{noLeader, closed}, Token: "glc_x", MaxRetryWait: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx := generous(t)
	_, err = c.Job(ctx, "j1")
	wantNoQuorum(t, ctx, err, map[string]string{noLeader: "answered 503 no_leader", closed: "refused the connection"})
	if calls.Load() < 2 {
		t.Errorf("asked the coordinator without a leader %d times, want it retried within MaxRetryWait", calls.Load())
	}
}

// A long poll's answer may take the wait it asked for: the answer
// timeout is counted on top of it.
func TestAnswerLimitLeavesLongPollsTheirWait(t *testing.T) {
	c, err := New(Config{Addrs: []string{"http://c1"}, FailFast: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		want time.Duration
	}{
		{"plain call", ctx, DefaultFailFastAnswerTimeout},
		{"long poll of 30 s", withAnswerWait(ctx, 30*time.Second), DefaultFailFastAnswerTimeout + 30*time.Second},
		{"stream", withoutAnswerTimeout(ctx), 0},
	} {
		if got := c.answerLimit(tc.ctx, true); got != tc.want {
			t.Errorf("%s: answer limit %v, want %v", tc.name, got, tc.want)
		}
	}
	if got := c.answerLimit(ctx, false); got != 0 {
		t.Errorf("without FailFast or AnswerTimeout: limit %v, want none", got)
	}
}
