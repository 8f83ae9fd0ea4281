package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"

	"github.com/gpulayer/gpulayer/internal/hclogslog"
)

// Node is a running Raft server.
type Node struct {
	cfg       Config
	raft      *raft.Raft
	transport transport
	store     *trimmedStore // closed on shutdown
	stores    Stores        // what raft writes to: store, maybe wrapped
	batcher   *batcher
}

// transport is what Raft talks to its peers through: TCP (or TLS), or,
// for a node that will never have peers (Config.InProcess), nothing that
// leaves the process.
type transport interface {
	raft.Transport
	Close() error
}

// Open starts a Raft node over the stores in cfg.DataDir.
func Open(cfg Config) (*Node, error) {
	cfg.withDefaults()
	if cfg.NodeID == "" || (cfg.RaftAddr == "" && !cfg.InProcess) || cfg.DataDir == "" || cfg.FSM == nil {
		return nil, errors.New("cluster: NodeID, RaftAddr, DataDir and FSM are required")
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("cluster: data dir: %w", err)
	}
	hlog := hclogslog.New(cfg.Logger.With("component", "raft"))
	hlog.SetLevel(hclog.Warn)

	rc := raft.DefaultConfig()
	rc.LocalID = raft.ServerID(cfg.NodeID)
	rc.HeartbeatTimeout = cfg.HeartbeatTimeout
	rc.ElectionTimeout = cfg.ElectionTimeout
	rc.LeaderLeaseTimeout = cfg.LeaderLeaseTimeout
	rc.SnapshotThreshold = cfg.SnapshotThreshold
	rc.TrailingLogs = max(cfg.SnapshotThreshold/2, 16)
	if cfg.SnapshotInterval > 0 {
		rc.SnapshotInterval = cfg.SnapshotInterval
	}
	rc.Logger = hlog
	if err := raft.ValidateConfig(rc); err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}

	logPath := filepath.Join(cfg.DataDir, "raft.db")
	bolt, err := raftboltdb.New(raftboltdb.Options{Path: logPath})
	if err != nil {
		return nil, fmt.Errorf("cluster: open log store: %w", err)
	}
	store := newTrimmedStore(bolt, logPath)
	snaps, err := newPrivateSnapshots(cfg.DataDir, 2, hlog)
	if err != nil {
		store.Close()
		return nil, fmt.Errorf("cluster: snapshot store: %w", err)
	}
	transport, err := openTransport(cfg, hlog)
	if err != nil {
		store.Close()
		return nil, err
	}
	stores := Stores{Log: store, Stable: store, Snapshots: snaps}
	if cfg.Stores != nil {
		stores = cfg.Stores(stores)
	}
	// Answer for the newest snapshot's last entry where compaction
	// removed it (snapmark.go: a follower could otherwise be stuck).
	mark := &snapMark{}
	if stores.Snapshots, err = markSnapshots(stores.Snapshots, mark); err != nil {
		transport.Close()
		store.Close()
		return nil, fmt.Errorf("cluster: snapshot store: %w", err)
	}
	stores.Log = &snapshotAwareLog{LogStore: stores.Log, mark: mark}
	// An operator's peers.json replaces a configuration that lost its
	// quorum (recover.go).
	if err := recoverPeers(cfg.DataDir, rc, cfg.FSM, stores, transport); err != nil {
		transport.Close()
		store.Close()
		return nil, err
	}
	// Pipelines that stall are closed (pipeline.go: a follower could
	// otherwise stop receiving entries for good).
	var rt raft.Transport = transport
	if nt, ok := transport.(*raft.NetworkTransport); ok {
		rt = guardedTransport{NetworkTransport: nt, stall: pipelineStall}
	}
	r, err := raft.NewRaft(rc, cfg.FSM, stores.Log, stores.Stable, stores.Snapshots, rt)
	if err != nil {
		transport.Close()
		store.Close()
		return nil, fmt.Errorf("cluster: start raft: %w", err)
	}
	n := &Node{cfg: cfg, raft: r, transport: transport, store: store, stores: stores}
	n.batcher = newBatcher(r, cfg.MaxBatch)
	return n, nil
}

// Raft exposes the underlying raft for membership operations.
func (n *Node) Raft() *raft.Raft { return n.raft }

// ID is the node's Raft server id.
func (n *Node) ID() string { return n.cfg.NodeID }

// Addr is the address Raft listens on.
func (n *Node) Addr() string { return string(n.transport.LocalAddr()) }

// IsLeader reports whether this node leads now.
func (n *Node) IsLeader() bool { return n.raft.State() == raft.Leader }

// Leader returns the leader's Raft address and id, empty if unknown.
func (n *Node) Leader() (addr, id string) {
	a, i := n.raft.LeaderWithID()
	return string(a), string(i)
}

// LeaderCh signals leadership changes (true on gaining it).
func (n *Node) LeaderCh() <-chan bool { return n.raft.LeaderCh() }

// Barrier waits until every entry committed before it has been applied.
func (n *Node) Barrier(ctx context.Context) error {
	timeout := 10 * time.Second
	if d, ok := ctx.Deadline(); ok {
		timeout = time.Until(d)
	}
	if err := n.raft.Barrier(timeout).Error(); err != nil {
		return translate(err)
	}
	return nil
}

// Apply proposes one encoded command and waits for the FSM's result. It
// returns ErrNotLeader on a follower.
func (n *Node) Apply(ctx context.Context, entry []byte) (any, error) {
	if n.raft.State() != raft.Leader {
		if addr, _ := n.raft.LeaderWithID(); addr == "" {
			return nil, ErrNoLeader
		}
		return nil, ErrNotLeader
	}
	return n.batcher.apply(ctx, entry)
}

// Servers lists the current configuration.
func (n *Node) Servers() ([]raft.Server, error) {
	f := n.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return nil, err
	}
	return f.Configuration().Servers, nil
}

// Snapshot forces a snapshot now (for compaction and tests).
func (n *Node) Snapshot() error { return n.raft.Snapshot().Error() }

// Stats exposes raft's counters.
func (n *Node) Stats() map[string]string { return n.raft.Stats() }

// Shutdown stops the node and closes its stores.
func (n *Node) Shutdown() error {
	if n.batcher != nil {
		n.batcher.close()
	}
	err := n.raft.Shutdown().Error()
	n.transport.Close()
	if cerr := n.store.Close(); err == nil {
		err = cerr
	}
	return err
}

func translate(err error) error {
	switch {
	case errors.Is(err, raft.ErrLeadershipLost):
		return fmt.Errorf("%w (%w): %v", ErrNotLeader, ErrOutcomeUnknown, err)
	case errors.Is(err, raft.ErrNotLeader), errors.Is(err, raft.ErrLeadershipTransferInProgress):
		return fmt.Errorf("%w: %v", ErrNotLeader, err)
	case errors.Is(err, raft.ErrRaftShutdown):
		return ErrShutdown
	}
	return err
}

// translateApply reads the error of a proposal's future. Besides raft's
// own errors there is one more: the leader failed to write the entry to
// its log (a write or fsync error, a full disk). Raft then steps down, and
// the entry may be on the leader's disk all the same (an fsync error after
// the write), to be committed if it leads again: the outcome is unknown.
func translateApply(err error) error {
	switch {
	case errors.Is(err, raft.ErrEnqueueTimeout):
		// Never appended: safe to send again.
		return fmt.Errorf("%w: %v", ErrNotLeader, err)
	case errors.Is(err, raft.ErrLeadershipLost), errors.Is(err, raft.ErrNotLeader),
		errors.Is(err, raft.ErrLeadershipTransferInProgress), errors.Is(err, raft.ErrRaftShutdown):
		return translate(err)
	}
	// The disk's error (which may name paths) stays in raft's own log line.
	return fmt.Errorf("%w (%w): the leader could not write its log", ErrNotLeader, ErrOutcomeUnknown)
}

// openTransport opens the node's Raft transport: an in-process one for a
// node that never has peers, else TCP (TLS with cfg.TLS) on cfg.RaftAddr.
func openTransport(cfg Config, hlog hclog.Logger) (transport, error) {
	if cfg.InProcess {
		_, t := raft.NewInmemTransport(raft.ServerAddress(InProcessAddr))
		return t, nil
	}
	stream, err := newStreamLayer(cfg.RaftAddr, cfg.RaftAdvertise, cfg.Dial, cfg.TLS)
	if err != nil {
		return nil, fmt.Errorf("cluster: raft transport: %w", err)
	}
	return raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{
		Stream:  stream,
		MaxPool: 8,
		Timeout: 10 * time.Second,
		Logger:  hlog,
	}), nil
}

// InProcessAddr is the Raft address of a node whose Raft never leaves
// its process (Config.InProcess).
const InProcessAddr = "in-process"
