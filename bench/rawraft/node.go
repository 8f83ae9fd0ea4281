// Package rawraft measures bare hashicorp/raft: three nodes on loopback
// TCP, each in its own process with its own data dir, configured as
// coordinator/cluster configures the coordinators (LAN timeouts, snapshot
// threshold, transport pool), applying opaque entries of a fixed size to
// an FSM that only counts them. It is the R1 reference of the benchmark.
//
// The log store is pluggable so that the same code can compare
// raft-boltdb with raft-wal (bench/walcmp does, in its own module).
package rawraft

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// Store is a log store and stable store in one, as raft-boltdb and
// raft-wal both are.
type Store interface {
	raft.LogStore
	raft.StableStore
	io.Closer
}

// StoreFactory opens a store in dir.
type StoreFactory func(dir string) (Store, error)

// The coordinator's LAN settings (coordinator/cluster/config.go).
const (
	heartbeatTimeout   = 500 * time.Millisecond
	electionTimeout    = 500 * time.Millisecond
	leaderLeaseTimeout = 250 * time.Millisecond
	snapshotThreshold  = 8192
)

// Peer is one node of the three.
type Peer struct {
	ID   string
	Addr string
}

type node struct {
	raft      *raft.Raft
	transport *raft.NetworkTransport
	store     Store
	fsm       *countFSM
}

func open(self Peer, peers []Peer, dir string, factory StoreFactory) (*node, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	hlog := hclog.New(&hclog.LoggerOptions{Name: "raft", Level: hclog.Warn, Output: os.Stderr})
	rc := raft.DefaultConfig()
	rc.LocalID = raft.ServerID(self.ID)
	rc.HeartbeatTimeout = heartbeatTimeout
	rc.ElectionTimeout = electionTimeout
	rc.LeaderLeaseTimeout = leaderLeaseTimeout
	rc.SnapshotThreshold = snapshotThreshold
	rc.TrailingLogs = snapshotThreshold / 2
	rc.Logger = hlog

	store, err := factory(filepath.Join(dir, "log"))
	if err != nil {
		return nil, fmt.Errorf("open log store: %w", err)
	}
	snaps, err := raft.NewFileSnapshotStoreWithLogger(dir, 2, hlog)
	if err != nil {
		store.Close()
		return nil, err
	}
	transport, err := raft.NewTCPTransportWithConfig(self.Addr, nil, &raft.NetworkTransportConfig{MaxPool: 8, Timeout: 10 * time.Second, Logger: hlog})
	if err != nil {
		store.Close()
		return nil, err
	}
	fsm := &countFSM{}
	r, err := raft.NewRaft(rc, fsm, store, store, snaps, transport)
	if err != nil {
		transport.Close()
		store.Close()
		return nil, err
	}
	conf := raft.Configuration{}
	for _, p := range peers {
		conf.Servers = append(conf.Servers, raft.Server{ID: raft.ServerID(p.ID), Address: raft.ServerAddress(p.Addr), Suffrage: raft.Voter})
	}
	if err := r.BootstrapCluster(conf).Error(); err != nil && err != raft.ErrCantBootstrap {
		_ = r.Shutdown().Error()
		transport.Close()
		store.Close()
		return nil, err
	}
	return &node{raft: r, transport: transport, store: store, fsm: fsm}, nil
}

func (n *node) close() {
	_ = n.raft.Shutdown().Error()
	n.transport.Close()
	n.store.Close()
}

// countFSM applies nothing but a count, so R1 measures Raft alone.
type countFSM struct{ n atomic.Uint64 }

func (f *countFSM) Apply(*raft.Log) any { f.n.Add(1); return nil }

func (f *countFSM) Snapshot() (raft.FSMSnapshot, error) { return countSnap(f.n.Load()), nil }

func (f *countFSM) Restore(rc io.ReadCloser) error {
	_, err := io.Copy(io.Discard, rc)
	rc.Close()
	return err
}

type countSnap uint64

func (s countSnap) Persist(sink raft.SnapshotSink) error {
	if _, err := fmt.Fprintf(sink, "%d", uint64(s)); err != nil {
		_ = sink.Cancel()
		return err
	}
	return sink.Close()
}

func (countSnap) Release() {}
