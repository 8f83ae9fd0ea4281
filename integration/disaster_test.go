package integration

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// Disaster recovery, as docs/operations.md ("Disaster recovery") tells an
// operator to do it, on coordinators that each run in a process of their
// own over real TCP. Each test ends with every acknowledged job (and its
// output) and token read back through every node on its own, the same
// state on every node, and a new write taken through each.

// Two of three servers lose their disks for good. The one left has every
// acknowledged write but no quorum; it is restarted with a peers.json
// naming itself alone, leads a cluster of one, and two new servers with
// empty data dirs join it (--join, then add-peer) to make three again.
func TestDisasterLosingTwoOfThreeDisks(t *testing.T) {
	c := startProcessCluster(t, 3)
	admin := c.Client(c.AdminToken)
	ctx := t.Context()
	startAgent(t, strings.Join(c.URLs(), ","), c.JoinToken, "gpu-a", "dgxh100")
	before := acknowledge(t, admin, "before", 5)
	waitAll(t, admin, before.jobs)
	// The survivor must hold every acknowledged write: the operator
	// recovers from the server with the most recent data.
	c.Converged(30 * time.Second)

	survivor := c.Nodes[0]
	for _, n := range c.Nodes[1:] {
		loseNode(t, c, n)
	}
	checkNoQuorum(t, c, c.AdminToken)
	if got := localPeers(t, survivor); !slices.Equal(got, []string{"c1", "c2", "c3"}) {
		t.Fatalf("the survivor's configuration before the recovery: %v", got)
	}

	// The recovery: stop it, write peers.json naming it alone, start it
	// with its usual flags.
	c.Stop(survivor)
	writePeersJSON(t, survivor)
	c.Restart(survivor)
	if l := c.WaitLeader(20 * time.Second); l != survivor {
		t.Fatalf("leader %s, want the survivor %s", l.ID, survivor.ID)
	}
	checkRecovered(t, survivor)
	checkEveryNode(t, c, c.AdminToken, len(before.jobs), []string{survivor.ID}, api.TaskSucceeded, before)

	// Two new servers with empty data dirs join; the cluster is three
	// again.
	for range 2 {
		n := c.AddNode()
		if _, err := admin.AddPeer(ctx, n.ID, n.RaftAddr); err != nil {
			t.Fatalf("add-peer %s: %v", n.ID, err)
		}
	}
	peers := ids(running(c)...)
	if !slices.Equal(peers, []string{"c1", "c4", "c5"}) {
		t.Fatalf("running after the joins: %v", peers)
	}
	after := acknowledge(t, admin, "after", 3)
	written := writeThroughEveryNode(t, c, c.AdminToken, "through")
	waitAll(t, admin, append(slices.Clone(after.jobs), written...))
	c.Converged(30 * time.Second)
	checkEveryNode(t, c, c.AdminToken, len(before.jobs)+len(after.jobs)+len(written), peers, api.TaskSucceeded, before, after)
}

// A snapshot saved from a running cluster restores into a brand-new one
// (new data dirs, new cluster key, new init tokens) after the old one is
// gone. The restored state holds the old cluster's credentials: its
// admin, client and join tokens and its workers' credentials work on the
// new cluster, and the new cluster's init token no longer does.
func TestDisasterRestoreSnapshotIntoNewCluster(t *testing.T) {
	old := startProcessCluster(t, 3)
	oldAdmin := old.Client(old.AdminToken)
	ctx := t.Context()
	agentDir := filepath.Join(t.TempDir(), "gpu-a")
	ag := startAgent(t, strings.Join(old.URLs(), ","), old.JoinToken, "gpu-a", "dgxh100", agentOpts{dataDir: agentDir})
	done := acknowledge(t, oldAdmin, "done", 4)
	waitAll(t, oldAdmin, done.jobs)
	if err := ag.stop(); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "backup.snap")
	var snap bytes.Buffer
	if _, err := oldAdmin.SaveSnapshot(ctx, &snap); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, snap.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	before := old.Converged(30 * time.Second)
	for _, n := range old.Nodes {
		old.Stop(n)
	}

	fresh := startProcessCluster(t, 3)
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := fresh.Client(fresh.AdminToken).RestoreSnapshot(ctx, f); err != nil {
		t.Fatalf("restore into the new cluster: %v", err)
	}
	after := fresh.Converged(30 * time.Second)
	// Everything but the coordinators' HTTP addresses is the old
	// cluster's, to the byte.
	if b, a := withoutNodes(t, before), withoutNodes(t, after); !bytes.Equal(b, a) {
		t.Fatalf("the restored state differs from the saved one:\n%s\n---\n%s", b, a)
	}
	checkEveryNode(t, fresh, old.AdminToken, len(done.jobs), []string{"c1", "c2", "c3"}, api.TaskSucceeded, done)
	for _, n := range fresh.Nodes {
		if _, err := nodeClient(t, n, fresh.AdminToken).Jobs(ctx, 1); !client.IsCode(err, api.CodeUnauthenticated) {
			t.Fatalf("%s: the new cluster's init token after the restore: %v, want unauthenticated", n.ID, err)
		}
	}
	// The old join token registers a new worker.
	join, err := client.New(client.Config{Addrs: fresh.URLs(), Token: old.JoinToken})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := join.Register(ctx, api.RegisterRequest{WorkerID: "gpu-b", Capabilities: []string{"*"}, Executors: []string{"exec"}}); err != nil {
		t.Fatalf("the old join token on the new cluster: %v", err)
	}
	written := writeThroughEveryNode(t, fresh, old.AdminToken, "through")
	// The nodes table came with the snapshot; the leader recorded its own
	// address at the restore, and each follower records its own once it
	// finds the leader's.
	coordinatortest.WaitFor(t, 20*time.Second, "every node's own HTTP address in the restored state", func() bool {
		s := state.New()
		if err := s.Restore(bytes.NewReader(fresh.Converged(30 * time.Second))); err != nil {
			t.Fatal(err)
		}
		for _, n := range fresh.Nodes {
			if s.NodeHTTPAddr(n.ID) != n.URL {
				return false
			}
		}
		return true
	})
	// The worker's credential came with the snapshot: its agent, pointed
	// at the new cluster's addresses, runs the new jobs without joining
	// again.
	startAgent(t, strings.Join(fresh.URLs(), ","), "", "gpu-a", "dgxh100", agentOpts{dataDir: agentDir})
	admin := fresh.Client(old.AdminToken)
	waitAll(t, admin, written)
	checkInvariants(t, admin, written, api.TaskSucceeded)
	fresh.Converged(30 * time.Second)
	checkEveryNode(t, fresh, old.AdminToken, len(done.jobs)+len(written), []string{"c1", "c2", "c3"}, api.TaskSucceeded, done)
}

// A bad peer change: a voter added at an address that never answers
// (syntactically valid, so add-peer takes it) leaves three of four voters
// up, a quorum still; the loss of one more server then costs the quorum.
// The two left are stopped, given a peers.json naming both, and started:
// they elect a leader with every acknowledged write, and the server meant
// in the first place is added with its right address.
func TestDisasterBadPeerChange(t *testing.T) {
	c := startProcessCluster(t, 3)
	admin := c.Client(c.AdminToken)
	ctx := t.Context()
	before := acknowledge(t, admin, "before", 5)

	// Caught while the quorum holds, a bad voter is simply removed.
	if _, err := admin.AddPeer(ctx, "c9", coordinatortest.FreeAddr(t)); err != nil {
		t.Fatalf("add-peer at a dead address: %v", err)
	}
	if _, err := admin.RemovePeer(ctx, "c9"); err != nil {
		t.Fatalf("remove-peer of the bad voter: %v", err)
	}
	// Any node answers the peer list from its own Raft configuration,
	// which a follower learns of a moment after the leader committed it.
	coordinatortest.WaitFor(t, 10*time.Second, "every node to know the bad voter removed", func() bool {
		return slices.Equal(peerIDs(t, admin), []string{"c1", "c2", "c3"})
	})

	dead := coordinatortest.FreeAddr(t) // nothing listens there
	if _, err := admin.AddPeer(ctx, "c4", dead); err != nil {
		t.Fatalf("add-peer at a dead address: %v", err)
	}
	// Four voters, three up: writes still commit, on all three.
	between := acknowledge(t, admin, "between", 3)
	c.Converged(30 * time.Second)

	// The leader is lost, unless that is c1: the harness copies a new
	// node's bootstrap credentials from c1's data dir.
	lost := c.Leader()
	if lost == c.Nodes[0] {
		lost = c.Nodes[2]
	}
	loseNode(t, c, lost)
	left := running(c)
	checkNoQuorum(t, c, c.AdminToken)
	// Without a leader, each server still tells its configuration: the
	// bad voter is there.
	for _, n := range left {
		if got := localPeers(t, n); !slices.Equal(got, []string{"c1", "c2", "c3", "c4"}) {
			t.Fatalf("%s: configuration without a quorum: %v", n.ID, got)
		}
	}

	for _, n := range left {
		c.Stop(n)
	}
	writePeersJSON(t, left...)
	for _, n := range left {
		c.Restart(n)
	}
	c.WaitLeader(20 * time.Second)
	checkRecovered(t, left...)
	c.Converged(30 * time.Second)
	checkEveryNode(t, c, c.AdminToken, len(before.jobs)+len(between.jobs), ids(left...), api.TaskPending, before, between)
	written := writeThroughEveryNode(t, c, c.AdminToken, "recovered")

	// Back to three, with the address meant in the first place.
	n := c.AddNode()
	if n.ID != "c4" {
		t.Fatalf("new node %s, want c4", n.ID)
	}
	if _, err := admin.AddPeer(ctx, n.ID, n.RaftAddr); err != nil {
		t.Fatalf("add-peer %s: %v", n.ID, err)
	}
	c.Converged(30 * time.Second)
	checkEveryNode(t, c, c.AdminToken, len(before.jobs)+len(between.jobs)+len(written), ids(running(c)...), api.TaskPending, before, between)
	checkInvariants(t, admin, written, api.TaskPending)
}

// The same bad change on a one-server cluster (a lab, a first server
// before the others): add-peer at a dead address answers success, and the
// server, now one of two voters, loses its leadership at once. peers.json
// naming it alone brings it back with every acknowledged write.
func TestDisasterBadPeerChangeOnOneServer(t *testing.T) {
	c := startProcessCluster(t, 1)
	admin := c.Client(c.AdminToken)
	before := acknowledge(t, admin, "before", 3)
	if _, err := admin.AddPeer(t.Context(), "c2", coordinatortest.FreeAddr(t)); err != nil {
		t.Fatalf("add-peer at a dead address: %v", err)
	}
	checkNoQuorum(t, c, c.AdminToken)
	n := c.Nodes[0]
	if got := localPeers(t, n); !slices.Equal(got, []string{"c1", "c2"}) {
		t.Fatalf("configuration without a quorum: %v", got)
	}
	c.Stop(n)
	writePeersJSON(t, n)
	c.Restart(n)
	c.WaitLeader(20 * time.Second)
	checkRecovered(t, n)
	checkEveryNode(t, c, c.AdminToken, len(before.jobs), []string{"c1"}, api.TaskPending, before)
	written := writeThroughEveryNode(t, c, c.AdminToken, "recovered")
	checkInvariants(t, admin, append(slices.Clone(before.jobs), written...), api.TaskPending)
}
