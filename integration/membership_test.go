package integration

import (
	"bytes"
	"context"
	"slices"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

func peerIDs(t *testing.T, c *client.Client) []string {
	t.Helper()
	peers, err := c.Peers(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, p := range peers {
		ids = append(ids, p.ID)
	}
	slices.Sort(ids)
	return ids
}

func TestHAAddAndRemoveServersWithoutDowntime(t *testing.T) {
	c := startCluster(t, nil)
	admin := c.Client(c.AdminToken)
	ctx := t.Context()
	before := submitAll(t, admin, "m", 5)

	n4 := c.AddNode()
	if has := n4.Server().Node(); has.IsLeader() {
		t.Fatal("a joining server must not lead on its own")
	}
	if _, err := admin.AddPeer(ctx, n4.ID, n4.Server().Node().Addr()); err != nil {
		t.Fatal(err)
	}
	// Any node answers the peer list from its own Raft configuration,
	// which a follower learns of a moment after the leader committed it.
	coordinatortest.WaitFor(t, 10*time.Second, "every node to know the new voter", func() bool {
		return slices.Equal(peerIDs(t, admin), []string{"c1", "c2", "c3", "c4"})
	})
	c.Converged(30 * time.Second)

	// Remove a follower that has died; writes keep flowing throughout.
	var dead *coordinatortest.Node
	for _, n := range c.Nodes[:3] {
		if n != c.Leader() {
			dead = n
			break
		}
	}
	c.Stop(dead)
	if _, err := admin.RemovePeer(ctx, dead.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.RemovePeer(ctx, dead.ID); !client.IsCode(err, api.CodeNotFound) {
		t.Fatalf("removing an absent peer: %v, want not_found", err)
	}
	after := submitAll(t, admin, "n", 5)
	checkInvariants(t, admin, append(before, after...), api.TaskPending)
	coordinatortest.WaitFor(t, 10*time.Second, "every node to know the dead voter removed", func() bool {
		got := peerIDs(t, admin)
		return len(got) == 3 && !slices.Contains(got, dead.ID)
	})
	// The new server holds the whole state.
	solo, _ := client.New(client.Config{Addrs: []string{n4.URL}, Token: c.AdminToken})
	checkInvariants(t, solo, append(before, after...), api.TaskPending)
}

func TestHASnapshotSaveAndRestore(t *testing.T) {
	c := startCluster(t, nil)
	admin := c.Client(c.AdminToken)
	ctx := t.Context()
	kept := submitAll(t, admin, "kept", 5)
	var snap bytes.Buffer
	if _, err := admin.SaveSnapshot(ctx, &snap); err != nil {
		t.Fatal(err)
	}
	lost := submitAll(t, admin, "lost", 3)

	if err := admin.RestoreSnapshot(ctx, bytes.NewReader([]byte(`{"version":1,"jobs":"nope"}`))); !client.IsCode(err, api.CodeInvalidArgument) {
		t.Fatalf("restoring garbage: %v, want invalid_argument", err)
	}
	if _, err := admin.Job(ctx, lost[0]); err != nil {
		t.Fatalf("a refused restore changed the state: %v", err)
	}
	if err := admin.RestoreSnapshot(ctx, bytes.NewReader(snap.Bytes())); err != nil {
		t.Fatal(err)
	}
	c.Converged(30 * time.Second)
	checkInvariants(t, admin, kept, api.TaskPending)
	for _, id := range lost {
		if _, err := admin.Job(ctx, id); !client.IsCode(err, api.CodeNotFound) {
			t.Fatalf("job %s written after the snapshot survived a restore: %v", id, err)
		}
	}
}

// Two restores uploaded at once both succeed, one after the other: each
// is prepared and offered alone (a restore that met the other's offer
// would fail inside Raft's restore, which stops the leader), and the
// cluster ends in the state of one of the two snapshots.
func TestHAConcurrentSnapshotRestores(t *testing.T) {
	c := startCluster(t, nil)
	admin := c.Client(c.AdminToken)
	ctx := t.Context()
	a := submitAll(t, admin, "a", 2)
	var snapA, snapB bytes.Buffer
	if _, err := admin.SaveSnapshot(ctx, &snapA); err != nil {
		t.Fatal(err)
	}
	b := append(slices.Clone(a), submitAll(t, admin, "b", 3)...)
	if _, err := admin.SaveSnapshot(ctx, &snapB); err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 2)
	for _, snap := range []*bytes.Buffer{&snapA, &snapB} {
		go func() { errs <- admin.RestoreSnapshot(ctx, bytes.NewReader(snap.Bytes())) }()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatalf("concurrent restore: %v", err)
		}
	}
	c.Converged(30 * time.Second)
	jobs, err := admin.Jobs(ctx, 100)
	if err != nil {
		t.Fatal(err)
	}
	switch n := len(jobs); n {
	case len(a):
		checkInvariants(t, admin, a, api.TaskPending)
	case len(b):
		checkInvariants(t, admin, b, api.TaskPending)
	default:
		t.Fatalf("%d jobs after two restores, want %d or %d", n, len(a), len(b))
	}
}
