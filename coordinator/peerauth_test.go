package coordinator_test

import (
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/gpulayer/gpulayer/coordinator"
	"github.com/gpulayer/gpulayer/coordinator/cluster"
	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/internal/certs"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// peerClient is an HTTP client that shows a peer certificate derived from
// the cluster key in keyFile, as another coordinator would.
func peerClient(t *testing.T, keyFile string) *http.Client {
	t.Helper()
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: peerTLSFromKey(t, keyFile).ClientConfig()}}
}

func peerTLSFromKey(t *testing.T, keyFile string) *cluster.PeerTLS {
	t.Helper()
	cert, pool, err := certs.DerivedPeer(readKey(t, keyFile), "global", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return &cluster.PeerTLS{Certificate: cert, Roots: pool, ServerName: certs.ServerName("global")}
}

func readKey(t *testing.T, file string) []byte {
	t.Helper()
	text, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// The coordinator's own reader checks the file the way it is kept.
	copyFile := filepath.Join(dir, "k")
	if err := os.WriteFile(copyFile, text, 0o600); err != nil {
		t.Fatal(err)
	}
	key, err := coordinator.ReadClusterKey(copyFile)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func putNodeAddr(t *testing.T, hc *http.Client, base, id, body, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPut, base+"/v1/operator/nodes/"+id, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(api.ProtocolHeader, api.ProtocolVersion)
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	return resp.StatusCode, b.String()
}

// The review's Critical: one unauthenticated PUT from loopback (a trusted
// proxy address) rewrote the leader's recorded address. Now the route
// takes a coordinator's peer certificate and nothing else: not a source
// address, not a forwarding header, not an admin token. A real peer (the
// cluster key's certificate) is served, and what it sends is validated.
func TestNodeAddressNeedsAPeerCertificate(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	id := h.Server.Node().ID()
	recorded := h.Server.Store().NodeHTTPAddr(id)
	if recorded == "" {
		t.Fatal("the leader recorded no address of its own")
	}
	evil := `{"http_addr":"http://127.0.0.1:1"}`
	plain := &http.Client{Timeout: 10 * time.Second}
	attacks := []struct {
		name   string
		token  string
		header map[string]string
		want   int
	}{
		{"no credential, from loopback", "", nil, http.StatusUnauthorized},
		{"forged forwarding headers", "", map[string]string{"X-Forwarded-For": "127.0.0.1", "X-GpuLayer-Forwarded-By": id}, http.StatusUnauthorized},
		{"an admin token", h.AdminToken, nil, http.StatusForbidden},
		{"a join token", h.JoinToken, nil, http.StatusForbidden},
	}
	for _, a := range attacks {
		t.Run(a.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPut, h.URL+"/v1/operator/nodes/"+id, strings.NewReader(evil))
			req.Header.Set(api.ProtocolHeader, api.ProtocolVersion)
			if a.token != "" {
				req.Header.Set("Authorization", "Bearer "+a.token)
			}
			for k, v := range a.header {
				req.Header.Set(k, v)
			}
			resp, err := plain.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != a.want {
				t.Fatalf("got HTTP %d, want %d", resp.StatusCode, a.want)
			}
			if got := h.Server.Store().NodeHTTPAddr(id); got != recorded {
				t.Fatalf("the recorded address became %q", got)
			}
		})
	}

	// TLS with a certificate derived from another key is refused at the
	// handshake.
	wrongKey := filepath.Join(t.TempDir(), "other.key")
	if _, err := coordinator.InitClusterKey(filepath.Dir(wrongKey)); err != nil {
		t.Fatal(err)
	}
	https := strings.Replace(h.URL, "http://", "https://", 1)
	wrong := peerTLSFromKey(t, filepath.Join(filepath.Dir(wrongKey), coordinator.ClusterKeyFileName)).ClientConfig()
	wrong.InsecureSkipVerify = true // the server is the one to refuse
	if code, msg := putNodeAddr(t, &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: wrong}}, https, id, evil, ""); code != 0 {
		t.Fatalf("a peer certificate of another cluster key was answered HTTP %d: %s", code, msg)
	}

	// The cluster's own key: a coordinator. What it sends is validated.
	peer := peerClient(t, filepath.Join(h.DataDir, coordinator.ClusterKeyFileName))
	for _, tc := range []struct {
		name, id, body string
		want           int
	}{
		{"not a URL", id, `{"http_addr":"file:///etc/passwd"}`, http.StatusBadRequest},
		{"a path", id, `{"http_addr":"http://127.0.0.1:7070/x"}`, http.StatusBadRequest},
		{"no port", id, `{"http_addr":"http://127.0.0.1"}`, http.StatusBadRequest},
		{"user info", id, `{"http_addr":"http://u:p@127.0.0.1:7070"}`, http.StatusBadRequest},
		{"no coordinator by that id", "c9", `{"http_addr":"http://127.0.0.1:7070"}`, http.StatusNotFound},
	} {
		t.Run("peer sends "+tc.name, func(t *testing.T) {
			if code, msg := putNodeAddr(t, peer, https, tc.id, tc.body, ""); code != tc.want {
				t.Fatalf("got HTTP %d (%s), want %d", code, msg, tc.want)
			}
			if got := h.Server.Store().NodeHTTPAddr(id); got != recorded {
				t.Fatalf("the recorded address became %q", got)
			}
		})
	}
	if code, msg := putNodeAddr(t, peer, https, id, `{"http_addr":"`+recorded+`"}`, ""); code != http.StatusOK {
		t.Fatalf("a coordinator registering an address: HTTP %d %s", code, msg)
	}
}

// capture is a listener that records every request that reaches it and
// whether it carried a credential.
type capture struct {
	mu    sync.Mutex
	n     int
	creds []string
}

func (c *capture) handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		c.n++
		if a := r.Header.Get("Authorization"); a != "" {
			c.creds = append(c.creds, a)
		}
		c.mu.Unlock()
		w.WriteHeader(http.StatusOK)
	})
}

func (c *capture) seen() (int, []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n, append([]string(nil), c.creds...)
}

// Even with a coordinator's recorded address pointing at an attacker (as
// the Critical managed, and as a stale address a local process took over
// could), no coordinator sends it a client's credential: forwarding to
// the leader, artifact copies and address announcements run over TLS to a
// verified peer certificate only. The attacker listens both in plain HTTP
// and in TLS with a certificate of its own.
func TestNoCredentialReachesAnUnverifiedCoordinator(t *testing.T) {
	c := coordinatortest.StartCluster(t, 3, coordinatortest.Options{})
	leader := c.WaitLeader(15 * time.Second)
	c.Converged(10 * time.Second)
	var follower, other *coordinatortest.Node
	for _, n := range c.Nodes {
		switch {
		case n == leader:
		case follower == nil:
			follower = n
		default:
			other = n
		}
	}
	// Every follower announced its address, over the peer route.
	coordinatortest.WaitFor(t, 15*time.Second, "every coordinator's address recorded", func() bool {
		for _, n := range c.Nodes {
			if leader.Server().Store().NodeHTTPAddr(n.ID) != n.Server().URL() {
				return false
			}
		}
		return true
	})
	for _, tlsAttacker := range []bool{false, true} {
		name := map[bool]string{false: "plain HTTP attacker", true: "TLS attacker"}[tlsAttacker]
		t.Run(name, func(t *testing.T) {
			var got capture
			srv := httptest.NewUnstartedServer(got.handler())
			if tlsAttacker {
				srv.StartTLS()
			} else {
				srv.Start()
			}
			defer srv.Close()
			addr := "http://" + srv.Listener.Addr().String()
			// Poison the records of the leader and of one follower.
			for _, id := range []string{leader.ID, other.ID} {
				if _, err := state.Propose[struct{}](t.Context(), leader.Server().Propose, command.RegisterNode{NodeID: id, HTTPAddr: addr}); err != nil {
					t.Fatal(err)
				}
			}
			coordinatortest.WaitFor(t, 10*time.Second, "the poisoned record on the follower", func() bool {
				return follower.Server().Store().NodeHTTPAddr(leader.ID) == addr
			})
			// An admin call through the follower is not forwarded to the
			// attacker: it fails (no leader reachable) instead.
			req, _ := http.NewRequest(http.MethodGet, follower.URL+"/v1/jobs", nil)
			req.Header.Set(api.ProtocolHeader, api.ProtocolVersion)
			req.Header.Set("Authorization", "Bearer "+c.AdminToken)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				t.Fatal("the follower answered 200 through the attacker's address")
			}
			// An upload to the leader is copied to a verified coordinator
			// (the follower whose address is real), never to the
			// attacker's address.
			data := []byte("artifact bytes for the copy test " + name)
			sum := sha256.Sum256(data)
			digest := hex.EncodeToString(sum[:])
			up, _ := http.NewRequest(http.MethodPut, leader.URL+"/v1/artifacts/"+digest, bytes.NewReader(data))
			up.Header.Set(api.ProtocolHeader, api.ProtocolVersion)
			up.Header.Set("Authorization", "Bearer "+c.AdminToken)
			up.Header.Set("Content-Type", "application/octet-stream")
			uresp, err := http.DefaultClient.Do(up)
			if err != nil {
				t.Fatal(err)
			}
			var ub bytes.Buffer
			_, _ = ub.ReadFrom(uresp.Body)
			uresp.Body.Close()
			if uresp.StatusCode != http.StatusCreated && uresp.StatusCode != http.StatusOK {
				t.Fatalf("upload: HTTP %d %s", uresp.StatusCode, ub.String())
			}
			meta, ok := leader.Server().Store().Artifact(digest)
			if !ok {
				t.Fatal("the upload was not recorded")
			}
			for _, holder := range meta.Holders {
				if holder == other.ID {
					t.Fatalf("recorded %s, whose address is the attacker's, as a holder", other.ID)
				}
			}
			n, creds := got.seen()
			if len(creds) > 0 {
				t.Fatalf("the attacker received %d credentials (%d requests)", len(creds), n)
			}
			if n > 0 {
				t.Fatalf("the attacker received %d requests", n)
			}
			// Heal the records for the next round.
			for _, node := range []*coordinatortest.Node{leader, other} {
				if _, err := state.Propose[struct{}](t.Context(), leader.Server().Propose, command.RegisterNode{NodeID: node.ID, HTTPAddr: node.Server().URL()}); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// The review's second High: on a one-node loopback set-up, a local
// process with no credential sent Raft one InstallSnapshot and took the
// cluster over. Raft now runs over mutual TLS with certificates derived
// from the cluster key, loopback included: plain TCP, TLS with no
// certificate and TLS with a certificate of another cluster key are all
// refused before Raft reads a byte. The same RPC, sent with the node's
// own key, is answered: the payload is a real attack.
func TestLoopbackRaftRefusesWhoeverLacksTheClusterKey(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	self := raft.Server{ID: raft.ServerID(h.Server.Node().ID()), Address: raft.ServerAddress(h.RaftAddr)}
	forged := forgedState(t, coordinatortest.Start(t, coordinatortest.Options{}).Server)
	name := certs.ServerName("global")
	otherDir := t.TempDir()
	if _, err := coordinator.InitClusterKey(otherDir); err != nil {
		t.Fatal(err)
	}
	keyDial := func(keyFile string) func(string, time.Duration) (net.Conn, error) {
		conf := peerTLSFromKey(t, keyFile).ClientConfig()
		conf.InsecureSkipVerify = true // whether to refuse is the target's call
		return func(addr string, timeout time.Duration) (net.Conn, error) {
			return tls.DialWithDialer(&net.Dialer{Timeout: timeout}, "tcp", addr, conf)
		}
	}
	for _, a := range []struct {
		name string
		dial func(string, time.Duration) (net.Conn, error)
	}{
		{"plain TCP", plainDial},
		{"TLS, no certificate", func(addr string, timeout time.Duration) (net.Conn, error) { return tlsDialNoCert(addr, timeout, name) }},
		{"TLS, another cluster key", keyDial(filepath.Join(otherDir, coordinator.ClusterKeyFileName))},
	} {
		t.Run(a.name, func(t *testing.T) {
			tr := newAttacker(t, a.dial)
			before := viewOf(t, h.Server)
			if err := requestVote(tr, self, self, before.term); err == nil {
				t.Error("RequestVote answered")
			}
			if ok, err := installSnapshot(tr, self, []raft.Server{self}, forged.install, before.term); err == nil || ok {
				t.Errorf("InstallSnapshot answered: ok=%v", ok)
			}
			after := viewOf(t, h.Server)
			if after.term != before.term || after.leaderID != before.leaderID || !bytes.Equal(after.state, before.state) {
				t.Fatalf("the node changed: term %d→%d, leader %q→%q", before.term, after.term, before.leaderID, after.leaderID)
			}
		})
	}
	// The control: with the node's own key the forged vote is heard.
	tr := newAttacker(t, keyDial(filepath.Join(h.DataDir, coordinator.ClusterKeyFileName)))
	before := viewOf(t, h.Server)
	if err := requestVote(tr, self, self, before.term); err != nil {
		t.Fatalf("RequestVote with the cluster key: %v", err)
	}
	if after := viewOf(t, h.Server); after.term <= before.term {
		t.Fatalf("the vote with the cluster key left the term at %d", after.term)
	}
}

// A coordinator that must share a key and has none does not start, and a
// key others can read is refused, as ssh refuses a readable private key.
func TestClusterKeyStartChecks(t *testing.T) {
	t.Run("several founders, no key", func(t *testing.T) {
		dir := t.TempDir()
		if _, err := coordinator.Init(dir, false, time.Now()); err != nil {
			t.Fatal(err)
		}
		// Its init tokens copied from the first coordinator, not its key.
		if err := os.Remove(filepath.Join(dir, coordinator.ClusterKeyFileName)); err != nil {
			t.Fatal(err)
		}
		_, err := coordinator.New(coordinator.Config{DataDir: dir, HTTPAddr: "127.0.0.1:0", RaftAddr: "127.0.0.1:0", BootstrapExpect: 3, Join: []string{"http://127.0.0.1:1"}})
		if err == nil || !strings.Contains(err.Error(), coordinator.ClusterKeyFileName) {
			t.Fatalf("err = %v, want one naming %s", err, coordinator.ClusterKeyFileName)
		}
	})
	t.Run("a key others can read", func(t *testing.T) {
		dir := t.TempDir()
		file, err := coordinator.InitClusterKey(dir)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(file, 0o644); err != nil {
			t.Fatal(err)
		}
		data := t.TempDir()
		if _, err := coordinator.Init(data, false, time.Now()); err != nil {
			t.Fatal(err)
		}
		_, err = coordinator.New(coordinator.Config{DataDir: data, HTTPAddr: "127.0.0.1:0", RaftAddr: "127.0.0.1:0", ClusterKeyFile: file})
		if err == nil || !strings.Contains(err.Error(), "0644") {
			t.Fatalf("err = %v, want one naming the mode", err)
		}
	})
	t.Run("a cluster member that lost its key", func(t *testing.T) {
		c := coordinatortest.StartCluster(t, 3, coordinatortest.Options{})
		c.WaitLeader(15 * time.Second)
		c.Converged(10 * time.Second)
		n := c.Nodes[2]
		c.Stop(n)
		// The cluster's key is a file of its own (--cluster-key-file);
		// restarted without it, and without --join or --bootstrap-expect
		// as a member restarts, it must not make a key of its own.
		key := filepath.Join(n.DataDir, coordinator.ClusterKeyFileName)
		_, err := coordinator.New(coordinator.Config{NodeID: n.ID, DataDir: n.DataDir, HTTPAddr: "127.0.0.1:0", RaftAddr: "127.0.0.1:0"})
		if !errors.Is(err, coordinator.ErrNoClusterKey) || !strings.Contains(err.Error(), "3 coordinators") {
			t.Fatalf("err = %v, want ErrNoClusterKey naming the cluster of 3", err)
		}
		if _, err := os.Stat(key); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("a key was made: %v", err)
		}
	})
	t.Run("a one-node data dir makes its own", func(t *testing.T) {
		h := coordinatortest.Start(t, coordinatortest.Options{})
		fi, err := os.Stat(filepath.Join(h.DataDir, coordinator.ClusterKeyFileName))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Fatalf("cluster key mode %04o", fi.Mode().Perm())
		}
	})
}

// A follower forwards a client's request to the leader over its own peer
// connection, so the leader must tell a forwarded request from a
// coordinator's own call by the mark the follower sets, which a client
// cannot remove (naming it in Connection made the proxy drop it) or
// replace with the internal headers of an artifact copy (which skipped
// the byte quota and recorded nothing).
func TestForwardedRequestsAreNeverPeerCalls(t *testing.T) {
	c := coordinatortest.StartCluster(t, 3, coordinatortest.Options{})
	leader := c.WaitLeader(15 * time.Second)
	c.Converged(10 * time.Second)
	var follower *coordinatortest.Node
	for _, n := range c.Nodes {
		if n != leader {
			follower = n
			break
		}
	}
	coordinatortest.WaitFor(t, 15*time.Second, "every coordinator's address recorded", func() bool {
		for _, n := range c.Nodes {
			if leader.Server().Store().NodeHTTPAddr(n.ID) != n.Server().URL() {
				return false
			}
		}
		return true
	})
	recorded := leader.Server().Store().NodeHTTPAddr(leader.ID)
	req, _ := http.NewRequest(http.MethodPut, follower.URL+"/v1/operator/nodes/"+leader.ID, strings.NewReader(`{"http_addr":"https://127.0.0.1:1"}`))
	req.Header.Set(api.ProtocolHeader, api.ProtocolVersion)
	req.Header.Set("Connection", "X-GpuLayer-Forwarded-By")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		t.Fatal("a client's registration through a follower was taken as a coordinator's")
	}
	if got := leader.Server().Store().NodeHTTPAddr(leader.ID); got != recorded {
		t.Fatalf("the leader's address became %q", got)
	}

	data := []byte("a client's bytes dressed as a copy")
	d := digest(data)
	up, _ := http.NewRequest(http.MethodPut, follower.URL+"/v1/artifacts/"+d, bytes.NewReader(data))
	up.Header.Set(api.ProtocolHeader, api.ProtocolVersion)
	up.Header.Set("Authorization", "Bearer "+c.AdminToken)
	up.Header.Set("X-GpuLayer-Artifact-Local", "1")
	up.Header.Set("X-GpuLayer-Applied-Index", "999999999")
	uresp, err := http.DefaultClient.Do(up)
	if err != nil {
		t.Fatal(err)
	}
	uresp.Body.Close()
	if uresp.StatusCode != http.StatusCreated {
		t.Fatalf("upload through a follower: HTTP %d", uresp.StatusCode)
	}
	if meta, ok := leader.Server().Store().Artifact(d); !ok || len(meta.Holders) < 2 {
		t.Fatalf("the upload was stored as a copy, outside the record and the quota: recorded=%v %+v", ok, meta)
	}
}

// A cluster key is read only from a regular file that this process's
// user owns and no one else can read: a link planted in its place, or a
// file another user could rewrite, is refused on the open file.
func TestReadClusterKeyRefuses(t *testing.T) {
	dir := t.TempDir()
	good, err := coordinator.InitClusterKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := coordinator.ReadClusterKey(good); err != nil {
		t.Fatalf("the key init made: %v", err)
	}
	if _, err := coordinator.InitClusterKey(dir); err != nil {
		t.Fatalf("init again over an existing key: %v", err)
	}
	cases := []struct {
		name string
		make func(t *testing.T, path string)
		want string
	}{
		{"a symbolic link", func(t *testing.T, path string) {
			if err := os.Symlink(good, path); err != nil {
				t.Fatal(err)
			}
		}, "symbolic link"},
		{"readable by others", func(t *testing.T, path string) {
			copyKey(t, good, path, 0o640)
		}, "0640"},
		{"owned by another user", func(t *testing.T, path string) {
			if os.Geteuid() != 0 {
				t.Skip("needs root to give a file away")
			}
			copyKey(t, good, path, 0o600)
			if err := os.Chown(path, 65534, 65534); err != nil {
				t.Fatal(err)
			}
		}, "uid 65534"},
		{"a directory", func(t *testing.T, path string) {
			if err := os.Mkdir(path, 0o700); err != nil {
				t.Fatal(err)
			}
		}, "not a regular file"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "key")
			tc.make(t, path)
			_, err := coordinator.ReadClusterKey(path)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one naming %q", err, tc.want)
			}
		})
	}
}

func copyKey(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(to, mode); err != nil {
		t.Fatal(err)
	}
}
