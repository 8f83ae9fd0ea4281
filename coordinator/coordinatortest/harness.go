// Package coordinatortest starts real coordinators (real Raft over loopback
// TCP, real HTTP) for tests.
package coordinatortest

import (
	"context"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator"
	"github.com/gpulayer/gpulayer/internal/testenv"
	"github.com/gpulayer/gpulayer/sdk/api"
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
	// TLS, when set, runs every link over TLS with these certificates
	// (Tweak still runs after, and may change any of it).
	TLS   *TLS
	Tweak func(*coordinator.Config)
	// Processes runs each node of a Cluster in its own process (the test
	// binary, started again), so that a test can SIGKILL it and drive its
	// clock and disk faults through Node.Control. The package's TestMain
	// must call ServeChild first. Only the Config fields in childSpec
	// reach the process; TLS is not supported.
	Processes bool
}

// FreeAddr returns a loopback address with a free port. Ports come from
// below Linux's ephemeral range, so that the kernel does not hand the same
// port to an outgoing connection or a ":0" listener between this call and
// the moment the coordinator binds it, and each is claimed for this
// process (portlock.go), so that no other test process picks it too.
func FreeAddr(t testing.TB) string {
	t.Helper()
	for range 1000 {
		port := 20000 + rand.IntN(12000)
		if !claimPort(port) {
			continue
		}
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			releasePort(port)
			continue
		}
		t.Cleanup(func() { releasePort(port) })
		ln.Close()
		return addr
	}
	t.Fatal("no free loopback port below the ephemeral range")
	return ""
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
		logger = TestLogger(t)
	}
	cfg := coordinator.Config{
		DataDir:    h.DataDir,
		HTTPAddr:   "127.0.0.1:0",
		RaftAddr:   h.RaftAddr,
		Logger:     logger,
		LeaseGrace: time.Second,
		LeaseTick:  50 * time.Millisecond,
	}
	pinRaftTimeouts(&cfg)
	h.opts.TLS.apply(&cfg)
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
	c, err := client.New(client.Config{Addrs: []string{h.URL}, Token: token, CAFile: h.opts.TLS.caFile(), MaxRetryWait: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Worker registers a worker id (every capability, the exec executor, no
// devices) with the harness's join token and returns a client acting as
// it.
func (h *Harness) Worker(t testing.TB, id string) *client.Client {
	t.Helper()
	reg, err := h.Client(t, h.JoinToken).Register(t.Context(), api.RegisterRequest{WorkerID: id, Capabilities: []string{"*"}, Executors: []string{"exec"}})
	if err != nil {
		t.Fatalf("register %s: %v", id, err)
	}
	return h.Client(t, reg.WorkerToken)
}

// WaitFor polls cond until it holds or the timeout passes. It is how tests
// wait on a condition instead of sleeping.
func WaitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	testenv.WaitFor(t, timeout, func() string { return what }, cond)
}

// TestLogger discards logs, unless GPULAYER_TEST_LOG names a file: then
// every coordinator of the test appends its debug log there.
func TestLogger(t testing.TB) *slog.Logger {
	path := os.Getenv("GPULAYER_TEST_LOG")
	if path == "" {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return slog.New(slog.NewTextHandler(f, &slog.HandlerOptions{Level: slog.LevelDebug})).With("test", t.Name())
}
