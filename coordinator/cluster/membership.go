package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/hashicorp/raft"
)

// Server is one member of the Raft configuration.
type Server struct {
	ID      string
	Address string
}

// HasState reports whether the node has a log or snapshot already: a node
// that has one rejoins its cluster from disk and must never bootstrap.
func (n *Node) HasState() (bool, error) {
	return raft.HasExistingState(n.stores.Log, n.stores.Stable, n.stores.Snapshots)
}

// BootstrapWith forms a new cluster of servers (this node alone when
// servers is empty). Every founding member may call it with the same list;
// a node with existing state ignores it.
func (n *Node) BootstrapWith(servers []Server) error {
	has, err := n.HasState()
	if err != nil {
		return fmt.Errorf("cluster: inspect state: %w", err)
	}
	if has {
		return nil
	}
	conf := raft.Configuration{}
	if len(servers) == 0 {
		conf.Servers = []raft.Server{{ID: raft.ServerID(n.cfg.NodeID), Address: n.transport.LocalAddr()}}
	}
	for _, s := range servers {
		conf.Servers = append(conf.Servers, raft.Server{ID: raft.ServerID(s.ID), Address: raft.ServerAddress(s.Address), Suffrage: raft.Voter})
	}
	if err := n.raft.BootstrapCluster(conf).Error(); err != nil && !errors.Is(err, raft.ErrCantBootstrap) {
		return fmt.Errorf("cluster: bootstrap: %w", err)
	}
	return nil
}

func timeoutOf(ctx context.Context) time.Duration {
	if d, ok := ctx.Deadline(); ok {
		return max(time.Until(d), time.Millisecond)
	}
	return 30 * time.Second
}

// AddVoter adds a server (leader only). Adding a present server with the
// same address is a no-op.
func (n *Node) AddVoter(ctx context.Context, id, addr string) error {
	if err := n.raft.AddVoter(raft.ServerID(id), raft.ServerAddress(addr), 0, timeoutOf(ctx)).Error(); err != nil {
		return translate(err)
	}
	return nil
}

// RemoveServer removes a server (leader only).
func (n *Node) RemoveServer(ctx context.Context, id string) error {
	if err := n.raft.RemoveServer(raft.ServerID(id), 0, timeoutOf(ctx)).Error(); err != nil {
		return translate(err)
	}
	return nil
}

// Restore replaces the whole replicated state with a snapshot taken by
// the FSM (leader only); every server installs it.
func (n *Node) Restore(ctx context.Context, r io.Reader, size int64) error {
	meta := &raft.SnapshotMeta{Version: raft.SnapshotVersionMax, Size: size}
	if err := n.raft.Restore(meta, r, timeoutOf(ctx)); err != nil {
		return translate(err)
	}
	return nil
}
