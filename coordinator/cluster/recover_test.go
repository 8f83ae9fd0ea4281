package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// open starts a node over dir, Raft on addr, counting into c.
func open(t *testing.T, id, addr, dir string, c *counter) *Node {
	t.Helper()
	n, err := Open(Config{NodeID: id, RaftAddr: addr, DataDir: dir, FSM: c})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// leaderOf waits for one of nodes to gain leadership and returns it.
func leaderOf(t *testing.T, within time.Duration, nodes ...*Node) *Node {
	t.Helper()
	won := make(chan *Node, len(nodes))
	stop := make(chan struct{})
	defer close(stop)
	for _, n := range nodes {
		if n.IsLeader() {
			return n
		}
		go func() {
			for {
				select {
				case lead := <-n.LeaderCh():
					if lead {
						won <- n
						return
					}
				case <-stop:
					return
				}
			}
		}()
	}
	select {
	case n := <-won:
		return n
	case <-time.After(within):
		t.Fatalf("no leader within %v", within)
		return nil
	}
}

func writePeers(t *testing.T, dir string, peers ...map[string]any) {
	t.Helper()
	b, err := json.Marshal(peers)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, PeersFile), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// A cluster that lost its quorum for good (two of three coordinators
// gone) comes back from the one left: an operator writes peers.json
// naming it alone into its data dir and restarts it; it recovers the
// configuration from the file (raft.RecoverCluster), moves the file
// aside, elects itself and keeps every committed write (finding 3 of the
// third review).
func TestPeersJSONRecoversALostQuorum(t *testing.T) {
	const writes = 5
	dirs := []string{t.TempDir(), t.TempDir(), t.TempDir()}
	counters := []*counter{{target: writes, reached: make(chan struct{})}, {target: writes, reached: make(chan struct{})}, {target: writes, reached: make(chan struct{})}}
	var nodes []*Node
	var members []Server
	for i, id := range []string{"c1", "c2", "c3"} {
		n := open(t, id, "127.0.0.1:0", dirs[i], counters[i])
		nodes = append(nodes, n)
		members = append(members, Server{ID: id, Address: n.Addr()})
	}
	for _, n := range nodes {
		if err := n.BootstrapWith(members); err != nil {
			t.Fatal(err)
		}
	}
	lead := leaderOf(t, 20*time.Second, nodes...)
	for range writes {
		if _, err := lead.Apply(context.Background(), []byte("w")); err != nil {
			t.Fatal(err)
		}
	}
	survivor, addr := lead.ID(), lead.Addr()
	dir := dirs[0]
	for i, n := range nodes {
		if n == lead {
			dir = dirs[i]
		}
		if err := n.Shutdown(); err != nil {
			t.Fatal(err)
		}
	}

	// The file names the node alone; a bad one is refused and kept.
	writePeers(t, dir, map[string]any{"id": survivor, "address": "not an addr"})
	if _, err := Open(Config{NodeID: survivor, RaftAddr: addr, DataDir: dir, FSM: &counter{}}); !errors.Is(err, ErrBadPeers) {
		t.Fatalf("open with a bad peers.json: %v, want %v", err, ErrBadPeers)
	}
	writePeers(t, dir, map[string]any{"id": "c9", "address": "127.0.0.1:9"})
	if _, err := Open(Config{NodeID: survivor, RaftAddr: addr, DataDir: dir, FSM: &counter{}}); !errors.Is(err, ErrBadPeers) {
		t.Fatalf("open with a peers.json without the node: %v, want %v", err, ErrBadPeers)
	}

	writePeers(t, dir, map[string]any{"id": survivor, "address": addr})
	c := &counter{target: writes, reached: make(chan struct{})}
	n := open(t, survivor, addr, dir, c)
	defer n.Shutdown()
	leaderOf(t, 20*time.Second, n)
	if got := c.n.Load(); got != writes {
		t.Fatalf("recovered node holds %d writes, want %d", got, writes)
	}
	if _, err := n.Apply(context.Background(), []byte("after")); err != nil {
		t.Fatalf("write after the recovery: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, PeersFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("peers.json is still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, PeersFile+recoveredSuffix)); err != nil {
		t.Fatalf("peers.json was not moved aside: %v", err)
	}
	servers, err := n.Servers()
	if err != nil || len(servers) != 1 || string(servers[0].ID) != survivor {
		t.Fatalf("configuration after the recovery: %v %v", servers, err)
	}
}
