// Package coordinatortest starts real coordinators (real Raft over loopback
// TCP, real HTTP) for tests.
package coordinatortest

import (
	"context"
	"io"
	"log/slog"
	"net"
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
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	cfg := coordinator.Config{
		DataDir:    dir,
		HTTPAddr:   "127.0.0.1:0",
		RaftAddr:   FreeAddr(t),
		Logger:     logger,
		LeaseGrace: time.Second,
		LeaseTick:  50 * time.Millisecond,
	}
	if opts.Tweak != nil {
		opts.Tweak(&cfg)
	}
	srv, err := coordinator.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("coordinator run: %v", err)
		}
	})
	WaitFor(t, 10*time.Second, "coordinator to lead", srv.LeaderReady)
	return &Harness{Server: srv, URL: srv.URL(), AdminToken: toks.AdminToken, JoinToken: toks.JoinToken, DataDir: dir}
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
