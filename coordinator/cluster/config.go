package cluster

import (
	"log/slog"
	"time"

	"github.com/hashicorp/raft"
)

// Config describes one Raft node.
type Config struct {
	// NodeID is the node's stable Raft server id.
	NodeID string
	// RaftAddr is the TCP address Raft binds.
	RaftAddr string
	// InProcess runs Raft with no port at all, over a transport that never
	// leaves the process: for a node that will never have peers (gpulayer
	// dev), so that nothing on the host, a task included, can reach its
	// Raft. RaftAddr is then unused, and the node cannot take peers.
	InProcess bool
	// RaftAdvertise is the address peers dial (default: RaftAddr).
	RaftAdvertise string
	// Dial replaces the TCP dialer (tests inject faults here); with TLS
	// the handshake runs over what it returns.
	Dial DialFunc
	// TLS, when set, runs Raft over mutual TLS (see PeerTLS). Nil is plain
	// TCP, for loopback only.
	TLS *PeerTLS
	// DataDir holds raft.db (log and stable store) and snapshots/.
	DataDir string
	// SnapshotInterval is how often Raft checks whether to snapshot.
	SnapshotInterval time.Duration
	// FSM receives committed commands.
	FSM raft.FSM
	// Logger receives Raft's lines (warnings and above).
	Logger *slog.Logger
	// Timeouts; zero values take the LAN defaults below.
	HeartbeatTimeout   time.Duration
	ElectionTimeout    time.Duration
	LeaderLeaseTimeout time.Duration
	// SnapshotThreshold is the number of entries between snapshots.
	SnapshotThreshold uint64
	// MaxBatch bounds how many commands share one log entry.
	MaxBatch int
	// Stores, when set, wraps the stores Raft writes to (tests inject disk
	// faults here; see internal/faultstore).
	Stores func(Stores) Stores
}

// Stores are the three stores a Raft server persists to.
type Stores struct {
	Log       raft.LogStore
	Stable    raft.StableStore
	Snapshots raft.SnapshotStore
}

// LAN defaults: a cluster in one network elects a leader in well under a
// second after a loss, where raft's WAN-safe defaults take seconds.
const (
	DefaultHeartbeatTimeout   = 300 * time.Millisecond
	DefaultElectionTimeout    = 300 * time.Millisecond
	DefaultLeaderLeaseTimeout = 300 * time.Millisecond
	DefaultSnapshotThreshold  = 8192
	// DefaultSnapshotInterval is how often Raft checks the threshold
	// (raft waits one to two intervals). Raft's own 120 s let a node
	// restarted more often than every two to four minutes never
	// snapshot: each start then replayed its whole log, hundreds of
	// megabytes after a busy while, and the node stayed behind for more
	// than 30 s (docs/reliability.md, "Failover"). The check is cheap; a
	// snapshot is still taken only past the threshold.
	DefaultSnapshotInterval = 10 * time.Second
	DefaultMaxBatch         = 256
)

func (c *Config) withDefaults() {
	if c.HeartbeatTimeout == 0 {
		c.HeartbeatTimeout = DefaultHeartbeatTimeout
	}
	if c.ElectionTimeout == 0 {
		c.ElectionTimeout = DefaultElectionTimeout
	}
	if c.LeaderLeaseTimeout == 0 {
		c.LeaderLeaseTimeout = DefaultLeaderLeaseTimeout
	}
	// Raft refuses a lease longer than the heartbeat timeout: a heartbeat
	// timeout set below the default lease brings the lease down with it.
	c.LeaderLeaseTimeout = min(c.LeaderLeaseTimeout, c.HeartbeatTimeout)
	if c.SnapshotThreshold == 0 {
		c.SnapshotThreshold = DefaultSnapshotThreshold
	}
	if c.SnapshotInterval == 0 {
		c.SnapshotInterval = DefaultSnapshotInterval
	}
	if c.MaxBatch == 0 {
		c.MaxBatch = DefaultMaxBatch
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
}
