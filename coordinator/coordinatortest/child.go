package coordinatortest

import (
	"bufio"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gpulayer/gpulayer/coordinator"
	"github.com/gpulayer/gpulayer/coordinator/cluster"
	"github.com/gpulayer/gpulayer/internal/clock"
	"github.com/gpulayer/gpulayer/internal/faultstore"
)

// childEnv carries a child's spec: a test binary started with it runs one
// coordinator instead of its tests (see ServeChild).
const childEnv = "GPULAYER_COORDINATORTEST_CHILD"

// childSpec is what a coordinator process needs from its parent: the
// settings of coordinator.Config that tests use, and where each peer's
// Raft connections are to go (the parent's link proxies).
type childSpec struct {
	NodeID                string
	DataDir               string
	HTTPAddr              string
	RaftAddr              string
	BootstrapExpect       int
	Join                  []string
	HeartbeatInterval     time.Duration
	LeaseGrace            time.Duration
	LeaseTick             time.Duration
	RaftHeartbeatTimeout  time.Duration
	RaftElectionTimeout   time.Duration
	RaftLeaseTimeout      time.Duration
	RaftSnapshotThreshold uint64
	RaftSnapshotInterval  time.Duration
	// Links maps a peer's Raft address to the proxy this node dials
	// instead.
	Links map[string]string
	// ClusterKeyFile is the cluster's shared key.
	ClusterKeyFile string
}

func specOf(cfg coordinator.Config, links map[string]string) childSpec {
	return childSpec{
		NodeID: cfg.NodeID, DataDir: cfg.DataDir, HTTPAddr: cfg.HTTPAddr, RaftAddr: cfg.RaftAddr,
		BootstrapExpect: cfg.BootstrapExpect, Join: cfg.Join,
		HeartbeatInterval: cfg.HeartbeatInterval, LeaseGrace: cfg.LeaseGrace, LeaseTick: cfg.LeaseTick,
		RaftHeartbeatTimeout: cfg.RaftHeartbeatTimeout, RaftElectionTimeout: cfg.RaftElectionTimeout, RaftLeaseTimeout: cfg.RaftLeaderLeaseTimeout,
		RaftSnapshotThreshold: cfg.RaftSnapshotThreshold, RaftSnapshotInterval: cfg.RaftSnapshotInterval,
		Links: links, ClusterKeyFile: cfg.ClusterKeyFile,
	}
}

// ServeChild makes the test binary a coordinator process when a Cluster
// with Options.Processes started it: it runs the coordinator until SIGTERM
// (a graceful stop), SIGKILL, or the end of its standard input (its parent
// has gone), and never returns. Otherwise it returns at once. A package
// whose tests use Options.Processes calls it first thing in TestMain.
func ServeChild() {
	raw := os.Getenv(childEnv)
	if raw == "" {
		return
	}
	os.Exit(runChild(raw))
}

func runChild(raw string) int {
	var spec childSpec
	if err := json.Unmarshal([]byte(raw), &spec); err != nil {
		fmt.Fprintln(os.Stderr, "coordinatortest child: bad spec:", err)
		return 2
	}
	logger := childLogger(spec.NodeID)
	clk := clock.NewStepped(clock.Real{})
	disk := faultstore.New()
	cfg := coordinator.Config{
		NodeID: spec.NodeID, DataDir: spec.DataDir, HTTPAddr: spec.HTTPAddr, RaftAddr: spec.RaftAddr,
		BootstrapExpect: spec.BootstrapExpect, Join: spec.Join, ClusterKeyFile: spec.ClusterKeyFile,
		HeartbeatInterval: spec.HeartbeatInterval, LeaseGrace: spec.LeaseGrace, LeaseTick: spec.LeaseTick,
		RaftHeartbeatTimeout: spec.RaftHeartbeatTimeout, RaftElectionTimeout: spec.RaftElectionTimeout, RaftLeaderLeaseTimeout: spec.RaftLeaseTimeout,
		RaftSnapshotThreshold: spec.RaftSnapshotThreshold, RaftSnapshotInterval: spec.RaftSnapshotInterval,
		Logger: logger,
		Clock:  clk,
		RaftDial: func(address string, timeout time.Duration) (net.Conn, error) {
			if p, ok := spec.Links[address]; ok {
				address = p
			}
			return net.DialTimeout("tcp", address, timeout)
		},
		RaftStores: func(s cluster.Stores) cluster.Stores {
			return cluster.Stores{Log: disk.LogStore(s.Log), Stable: disk.StableStore(s.Stable), Snapshots: disk.SnapshotStore(s.Snapshots)}
		},
	}
	srv, err := coordinator.New(cfg)
	out := bufio.NewWriter(os.Stdout)
	answer := func(format string, args ...any) {
		fmt.Fprintf(out, format+"\n", args...)
		_ = out.Flush()
	}
	if err != nil {
		answer("fail %s", strings.ReplaceAll(err.Error(), "\n", " "))
		return 3
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	terms := make(chan os.Signal, 1)
	signal.Notify(terms, syscall.SIGTERM)
	go func() {
		<-terms
		cancel()
	}()
	answer("ready")

	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines) // the parent is gone
	}()
	for {
		select {
		case err := <-done:
			if err != nil {
				fmt.Fprintln(os.Stderr, "coordinator:", err)
				return 1
			}
			return 0
		case line, ok := <-lines:
			if !ok {
				return 4
			}
			answer("%s", control(srv, clk, disk, line))
		}
	}
}

// childLogger logs warnings to standard error, which the parent keeps the
// end of; with GPULAYER_TEST_LOG, every line to that file instead.
func childLogger(id string) *slog.Logger {
	if path := os.Getenv("GPULAYER_TEST_LOG"); path != "" {
		if f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600); err == nil {
			return slog.New(slog.NewTextHandler(f, &slog.HandlerOptions{Level: slog.LevelDebug})).With("node", id, "pid", os.Getpid())
		}
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// control runs one command from the parent and returns its one-line
// answer: "ok[ value]" or "err message".
func control(srv *coordinator.Server, clk *clock.Stepped, disk *faultstore.Disk, line string) string {
	f := strings.Fields(line)
	if len(f) == 0 {
		return "err empty command"
	}
	arg := func(i int) string {
		if i < len(f) {
			return f[i]
		}
		return ""
	}
	switch f[0] {
	case "leader":
		return "ok " + strconv.FormatBool(srv.LeaderReady())
	case "raft":
		return "ok " + raftSummary(srv.Node().Stats())
	case "stacks":
		file, err := os.Create(arg(1))
		if err != nil {
			return "err " + err.Error()
		}
		defer file.Close()
		if err := pprof.Lookup("goroutine").WriteTo(file, 2); err != nil {
			return "err " + err.Error()
		}
		return "ok"
	case "snapshot":
		file, err := os.Create(arg(1))
		if err != nil {
			return "err " + err.Error()
		}
		defer file.Close()
		if err := srv.Store().Snapshot(file); err != nil {
			return "err " + err.Error()
		}
		return "ok"
	case "output":
		sum, err := outputDigest(srv.Store())
		if err != nil {
			return "err " + err.Error()
		}
		return "ok " + hex.EncodeToString(sum)
	case "clock":
		d, err := time.ParseDuration(arg(1))
		if err != nil {
			return "err " + err.Error()
		}
		clk.Step(d)
		return "ok " + clk.Offset().String()
	case "fail-writes", "fail-syncs":
		n, err := strconv.Atoi(arg(1))
		if err != nil || n < 0 {
			return "err want a count"
		}
		if f[0] == "fail-writes" {
			disk.FailWrites(n)
		} else {
			disk.FailSyncs(n)
		}
		return "ok"
	case "disk-full":
		disk.SetFull(arg(1) == "on")
		return "ok"
	case "injected":
		counts := disk.Injected()
		keys := make([]string, 0, len(counts))
		for k := range counts {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = fmt.Sprintf("%s=%d", k, counts[k])
		}
		return strings.TrimSpace("ok " + strings.Join(parts, " "))
	}
	return "err unknown command " + strconv.Quote(f[0])
}

// raftSummary is the part of a node's Raft stats that tells why it may not
// have caught up: its role and term, what it has in its log, committed and
// applied, its last snapshot, and when it last heard from a leader.
func raftSummary(st map[string]string) string {
	keys := []string{"state", "term", "last_log_index", "commit_index", "applied_index", "last_snapshot_index", "last_contact"}
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+"="+st[k])
	}
	return strings.Join(parts, " ")
}
