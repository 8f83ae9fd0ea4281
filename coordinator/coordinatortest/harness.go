// Package coordinatortest starts real coordinators (real Raft over loopback
// TCP, real HTTP) for tests.
package coordinatortest

import (
	"context"
	"io"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// Harness is a running single-node coordinator.
type Harness struct {
	Server     *coordinator.Server
	URL        string
	AdminToken string
	JoinToken  string
	DataDir    string
	RaftAddr   string

	opts Options
	stop func()
}

// Options tweak the coordinator a harness starts.
type Options struct {
	Logger *slog.Logger
	Tweak  func(*coordinator.Config)
}

// FreeAddr returns a loopback address with a free port.
func FreeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// Start runs a coordinator until the test ends and waits until it leads.
func Start(t testing.TB, opts Options) *Harness {
	t.Helper()
	dir := t.TempDir()
	toks, err := coordinator.Init(dir, false, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	h := &Harness{AdminToken: toks.AdminToken, JoinToken: toks.JoinToken, DataDir: dir, RaftAddr: FreeAddr(t), opts: opts}
	h.run(t)
	return h
}

// Restart stops h's coordinator and starts a new one on the same data dir
// and Raft address (a new HTTP port).
func Restart(t testing.TB, h *Harness) *Harness {
	t.Helper()
	h.Stop()
	n := &Harness{AdminToken: h.AdminToken, JoinToken: h.JoinToken, DataDir: h.DataDir, RaftAddr: h.RaftAddr, opts: h.opts}
	n.run(t)
	return n
}

// Stop shuts the coordinator down (idempotent).
func (h *Harness) Stop() { h.stop() }

func (h *Harness) run(t testing.TB) {
	t.Helper()
	logger := h.opts.Logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	cfg := coordinator.Config{
		DataDir:    h.DataDir,
		HTTPAddr:   "127.0.0.1:0",
		RaftAddr:   h.RaftAddr,
		Logger:     logger,
		LeaseGrace: time.Second,
		LeaseTick:  50 * time.Millisecond,
	}
	if h.opts.Tweak != nil {
		h.opts.Tweak(&cfg)
	}
	srv, err := coordinator.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	var once sync.Once
	h.stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("coordinator run: %v", err)
			}
		})
	}
	t.Cleanup(h.stop)
	WaitFor(t, 10*time.Second, "coordinator to lead", srv.LeaderReady)
	h.Server, h.URL = srv, srv.URL()
}

// Client returns a client for the harness with token.
func (h *Harness) Client(t testing.TB, token string) *client.Client {
	t.Helper()
	c, err := client.New(client.Config{Addrs: []string{h.URL}, Token: token, MaxRetryWait: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// WaitFor polls cond until it holds or the timeout passes. It is how tests
// wait on a condition instead of sleeping.
func WaitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		<-tick.C
	}
}
