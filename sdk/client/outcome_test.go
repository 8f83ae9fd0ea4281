package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// firstAnswerThenTask serves first for the first request and a task for
// every later one, and returns a client of it and the request count.
func firstAnswerThenTask(t *testing.T, first func(http.ResponseWriter)) (*Client, *atomic.Int32) {
	t.Helper()
	calls := new(atomic.Int32)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) > 1 {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"task":{"id":"t"}}`))
			return
		}
		first(w)
	}))
	t.Cleanup(srv.Close)
	c, err := New(Config{Addrs: []string{srv.URL}, Token: "glw_x", MaxRetryWait: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return c, calls
}

// An answer that says the write may have been applied (leadership lost
// while it committed) is not resent for a write that is not idempotent,
// and is for one that is.
func TestOutcomeUnknownIsResentOnlyWhenIdempotent(t *testing.T) {
	c, calls := firstAnswerThenTask(t, func(w http.ResponseWriter) {
		w.Header().Set(api.HeaderOutcome, api.OutcomeUnknown)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"error":{"code":"no_leader","message":"not the leader (outcome unknown)"}}`))
	})
	ctx := context.Background()
	cases := []struct {
		name      string
		call      func() error
		wantErr   bool
		wantCalls int32
	}{
		{"fail (not idempotent)", func() error {
			_, err := c.Fail(ctx, "t", api.FailRequest{AttemptID: "a", Reason: "r"})
			return err
		}, true, 1},
		{"finish without a submission id", func() error {
			_, err := c.Finish(ctx, "t", api.FinishRequest{AttemptID: "a"})
			return err
		}, true, 1},
		{"finish with a submission id", func() error {
			_, err := c.Finish(ctx, "t", api.FinishRequest{AttemptID: "a", SubmissionID: "s"})
			return err
		}, false, 2},
		{"acquire (request id)", func() error {
			_, err := c.Acquire(ctx, api.AcquireRequest{})
			return err
		}, false, 2},
	}
	for _, tc := range cases {
		calls.Store(0)
		err := tc.call()
		if (err != nil) != tc.wantErr || calls.Load() != tc.wantCalls {
			t.Errorf("%s: err %v after %d requests; want error %v after %d", tc.name, err, calls.Load(), tc.wantErr, tc.wantCalls)
		}
		if tc.wantErr && !IsCode(err, api.CodeNoLeader) {
			t.Errorf("%s: %v, want the no_leader answer", tc.name, err)
		}
	}
}

// A connection that breaks after the request reached the coordinator
// (closed before any answer, or an error answer cut short) leaves the
// outcome unknown: a write that is not idempotent is not resent, and its
// error says so; an idempotent one is resent. Before, a POST that met EOF
// or a reset was resent whatever it was, so a write could take effect
// twice and its caller see only the second answer (found by the fault
// campaign's HTTP link faults, seeds 50037, 50049, 50055).
func TestBrokenAnswersLeaveTheOutcomeUnknown(t *testing.T) {
	breaks := map[string]func(w http.ResponseWriter){
		"closed before any answer": func(w http.ResponseWriter) {
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				_ = conn.Close()
			}
		},
		"error answer cut short": func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", "200")
			w.WriteHeader(http.StatusConflict)
			_, _ = w.Write([]byte(`{"error":{"co`))
			if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
				_ = conn.Close()
			}
		},
	}
	for name, brk := range breaks {
		t.Run(name, func(t *testing.T) {
			c, calls := firstAnswerThenTask(t, brk)
			ctx := context.Background()
			cases := []struct {
				name      string
				call      func() error
				wantErr   bool
				wantCalls int32
			}{
				{"start (safe to repeat)", func() error { return c.Start(ctx, "t", "a") }, false, 2},
				{"fail (not idempotent)", func() error {
					_, err := c.Fail(ctx, "t", api.FailRequest{AttemptID: "a", Reason: "r"})
					return err
				}, true, 1},
				{"finish with a submission id", func() error {
					_, err := c.Finish(ctx, "t", api.FinishRequest{AttemptID: "a", SubmissionID: "s"})
					return err
				}, false, 2},
			}
			for _, tc := range cases {
				calls.Store(0)
				err := tc.call()
				if (err != nil) != tc.wantErr || calls.Load() != tc.wantCalls {
					t.Errorf("%s: err %v after %d requests; want error %v after %d", tc.name, err, calls.Load(), tc.wantErr, tc.wantCalls)
				}
				if tc.wantErr && !errors.Is(err, ErrOutcomeUnknown) {
					t.Errorf("%s: %v, want ErrOutcomeUnknown", tc.name, err)
				}
			}
		})
	}
}

// With FailFast (the client's, or one call's), a call gives up once every
// address has refused its dial, and names them, instead of retrying for
// MaxRetryWait (an hour here).
func TestFailFastNamesTheAddressesItTried(t *testing.T) {
	var addrs []string
	for range 2 {
		srv := httptest.NewServer(http.NotFoundHandler())
		addrs = append(addrs, srv.URL)
		srv.Close() // nothing listens there any more
	}
	c, err := New(Config{Addrs: addrs, Token: "glc_x", MaxRetryWait: time.Hour, FailFast: true})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Jobs(context.Background(), 1)
	var nq *NoQuorumError
	if !errors.As(err, &nq) || len(nq.Tries) != 2 || nq.Tries[0].Addr != addrs[0] || nq.Tries[1].Addr != addrs[1] ||
		!strings.Contains(err.Error(), addrs[0]+": refused the connection") || !strings.Contains(err.Error(), addrs[1]+": refused the connection") {
		t.Fatalf("Jobs = %v, want an error naming %v", err, addrs)
	}
	slow, err := New(Config{Addrs: addrs, Token: "glc_x", MaxRetryWait: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	// The same for one call marked so, on a client that otherwise retries.
	if _, err := slow.Jobs(FailFast(context.Background()), 1); !errors.Is(err, ErrNoQuorum) || !strings.Contains(err.Error(), "no coordinator leader or quorum is reachable") {
		t.Fatalf("Jobs(FailFast) = %v, want an error naming the addresses", err)
	}
}

// Unavailable tells "no coordinator could serve it" from "a coordinator
// refused it", for callers that retry on their own terms.
func TestUnavailable(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"dial refused", &url.Error{Op: "Post", URL: "http://c1", Err: errors.New("connection refused")}, true},
		{"answer lost", fmt.Errorf("client: POST /x: %w (EOF)", ErrOutcomeUnknown), true},
		{"no leader", &api.Error{Code: api.CodeNoLeader}, true},
		{"not leader", &api.Error{Code: api.CodeNotLeader}, true},
		{"rate limited", &api.Error{Code: api.CodeRateLimited}, true},
		{"stale attempt", &api.Error{Code: api.CodeStaleAttempt}, false},
		{"unauthenticated", &api.Error{Code: api.CodeUnauthenticated}, false},
		{"decode", errors.New("client: decode: invalid character"), false},
	} {
		if got := Unavailable(tc.err); got != tc.want {
			t.Errorf("%s: Unavailable(%v) = %v, want %v", tc.name, tc.err, got, tc.want)
		}
	}
}
