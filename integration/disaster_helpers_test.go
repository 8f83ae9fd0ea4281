package integration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator"
	"github.com/gpulayer/gpulayer/coordinator/cluster"
	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// The disaster tests (disaster_test.go) run each coordinator in a
// process of its own, as production does: a lost server is SIGKILLed and
// its data dir deleted, and what comes back reads only its own disk.

// startProcessCluster starts n coordinators, each in its own process.
func startProcessCluster(t *testing.T, n int) *coordinatortest.Cluster {
	t.Helper()
	return coordinatortest.StartCluster(t, n, coordinatortest.Options{Processes: true, Tweak: func(c *coordinator.Config) {
		c.HeartbeatInterval = 100 * time.Millisecond
	}})
}

// acked is what a cluster acknowledged before a disaster: jobs, each
// with an idempotency key, and a client token created through the API.
// A recovery must keep every piece of it.
type acked struct {
	prefix  string
	jobs    []string
	tokenID string
	token   string // a read-only client token
}

// acknowledge submits n jobs and creates a read-only client token, each
// acknowledged by the cluster.
func acknowledge(t *testing.T, admin *client.Client, prefix string, n int) acked {
	t.Helper()
	a := acked{prefix: prefix, jobs: submitAll(t, admin, prefix, n)}
	tok, err := admin.CreateToken(t.Context(), api.CreateTokenRequest{Kind: api.TokenKindClient, Name: prefix + "-reader", Roles: []string{"read"}})
	if err != nil {
		t.Fatalf("create token %s-reader: %v", prefix, err)
	}
	a.tokenID, a.token = tok.ID, tok.Token
	return a
}

// nodeClient is a client that talks to n alone.
func nodeClient(t *testing.T, n *coordinatortest.Node, token string) *client.Client {
	t.Helper()
	cl, err := client.New(client.Config{Addrs: []string{n.URL}, Token: token, MaxRetryWait: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// running lists c's nodes whose coordinator is up.
func running(c *coordinatortest.Cluster) []*coordinatortest.Node {
	var out []*coordinatortest.Node
	for _, n := range c.Nodes {
		if n.Running() {
			out = append(out, n)
		}
	}
	return out
}

// ids lists the nodes' ids, sorted.
func ids(nodes ...*coordinatortest.Node) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = n.ID
	}
	slices.Sort(out)
	return out
}

// localPeers is the Raft configuration n itself holds
// (GET /v1/status/peers, answered without a leader), as sorted ids.
func localPeers(t *testing.T, n *coordinatortest.Node) []string {
	t.Helper()
	return peerIDs(t, nodeClient(t, n, ""))
}

// localDigest is n's own account of its state
// (GET /v1/operator/local/digest, never forwarded).
func localDigest(t *testing.T, n *coordinatortest.Node, adminToken string) api.DigestResponse {
	t.Helper()
	var d api.DigestResponse
	if err := nodeClient(t, n, adminToken).Do(t.Context(), http.MethodGet, "/v1/operator/local/digest", nil, &d); err != nil {
		t.Fatalf("%s: local digest: %v", n.ID, err)
	}
	return d
}

// writePeersJSON writes into each node's data dir the peers.json that
// names exactly these nodes as voters (docs/operations.md, "Recovering
// from a lost quorum"), as an operator does with the nodes stopped.
func writePeersJSON(t *testing.T, nodes ...*coordinatortest.Node) {
	t.Helper()
	type server struct {
		ID       string `json:"id"`
		Address  string `json:"address"`
		NonVoter bool   `json:"non_voter"`
	}
	var servers []server
	for _, n := range nodes {
		servers = append(servers, server{ID: n.ID, Address: n.RaftAddr})
	}
	b, err := json.MarshalIndent(servers, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		if n.Running() {
			t.Fatalf("%s must be stopped before its peers.json is written", n.ID)
		}
		if err := os.WriteFile(filepath.Join(n.DataDir, cluster.PeersFile), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// checkRecovered asserts that each node recovered from its peers.json
// and moved the file aside, so that its next start does not recover
// again.
func checkRecovered(t *testing.T, nodes ...*coordinatortest.Node) {
	t.Helper()
	for _, n := range nodes {
		path := filepath.Join(n.DataDir, cluster.PeersFile)
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s: peers.json is still there after the start: %v", n.ID, err)
		}
		if _, err := os.Stat(path + ".recovered"); err != nil {
			t.Fatalf("%s: peers.json was not moved aside: %v", n.ID, err)
		}
	}
}

// loseNode ends n as a dead machine does (SIGKILL) and deletes its data
// dir: it never comes back.
func loseNode(t *testing.T, c *coordinatortest.Cluster, n *coordinatortest.Node) {
	t.Helper()
	c.Kill(n)
	if err := os.RemoveAll(n.DataDir); err != nil {
		t.Fatal(err)
	}
}

// checkNoQuorum asserts that the running nodes elect no leader and that
// a write through any of them fails.
func checkNoQuorum(t *testing.T, c *coordinatortest.Cluster, adminToken string) {
	t.Helper()
	coordinatortest.WaitFor(t, 15*time.Second, "the leader to step down", func() bool { return c.Leader() == nil })
	for _, n := range running(c) {
		cl, err := client.New(client.Config{Addrs: []string{n.URL}, Token: adminToken, MaxRetryWait: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
		_, err = cl.SubmitJob(ctx, execSpec("echo never", 0))
		cancel()
		if err == nil {
			t.Fatalf("%s took a write without a quorum", n.ID)
		}
	}
}

// checkEveryNode asserts, through each running node on its own, that the
// node holds wantJobs jobs and the Raft configuration wantPeers, that
// every acknowledged job is there in wantState (succeeded ones with their
// output), and that every acknowledged token is listed and still
// authenticates.
func checkEveryNode(t *testing.T, c *coordinatortest.Cluster, adminToken string, wantJobs int, wantPeers []string, wantState string, acks ...acked) {
	t.Helper()
	ctx := t.Context()
	for _, n := range running(c) {
		if d := localDigest(t, n, adminToken); d.NodeID != n.ID || d.Jobs != wantJobs {
			t.Fatalf("%s holds %d jobs (node %q), want %d", n.ID, d.Jobs, d.NodeID, wantJobs)
		}
		if got := localPeers(t, n); !slices.Equal(got, wantPeers) {
			t.Fatalf("%s: Raft configuration %v, want %v", n.ID, got, wantPeers)
		}
		admin := nodeClient(t, n, adminToken)
		toks, err := admin.Tokens(ctx)
		if err != nil {
			t.Fatalf("%s: list tokens: %v", n.ID, err)
		}
		for _, a := range acks {
			checkInvariants(t, admin, a.jobs, wantState)
			if wantState == api.TaskSucceeded {
				for i, id := range a.jobs {
					if got, want := logsOf(t, admin, id), fmt.Sprintf("%s-%d\n", a.prefix, i); got != want {
						t.Fatalf("%s: output of job %s is %q, want %q", n.ID, id, got, want)
					}
				}
			}
			if !slices.ContainsFunc(toks, func(ti api.TokenInfo) bool { return ti.ID == a.tokenID }) {
				t.Fatalf("%s: token %s is not listed", n.ID, a.tokenID)
			}
			if _, err := nodeClient(t, n, a.token).Job(ctx, a.jobs[0]); err != nil {
				t.Fatalf("%s: the acknowledged token %s-reader: %v", n.ID, a.prefix, err)
			}
		}
	}
}

// writeThroughEveryNode submits one job through each running node on its
// own and returns their ids: a recovered cluster takes writes wherever
// they arrive.
func writeThroughEveryNode(t *testing.T, c *coordinatortest.Cluster, adminToken, prefix string) []string {
	t.Helper()
	var written []string
	for _, n := range running(c) {
		spec := execSpec("echo "+prefix+"-"+n.ID, 0)
		spec.IdempotencyKey = prefix + "-" + n.ID
		job, err := nodeClient(t, n, adminToken).SubmitJob(t.Context(), spec)
		if err != nil {
			t.Fatalf("%s: a write after the recovery: %v", n.ID, err)
		}
		written = append(written, job.ID)
	}
	return written
}
