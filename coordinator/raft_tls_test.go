package coordinator_test

import (
	"bytes"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/gpulayer/gpulayer/coordinator/cluster"
	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/internal/certs"
)

// TestRaftRefusesUnauthenticatedPeers repeats the review's attacks on a
// three-node cluster whose Raft runs over mutual TLS: a raw RequestVote
// (leader step-down) and a raw InstallSnapshot (whole-state replacement)
// are written to the leader and to a follower over plain TCP, over TLS
// with a certificate of another CA, with a client certificate of the
// cluster's own CA, and with a server certificate of the same CA for
// another cluster name. Every one is refused before Raft reads it: no
// node changes term, leader or state, and the cluster keeps working.
func TestRaftRefusesUnauthenticatedPeers(t *testing.T) {
	files := coordinatortest.NewTLS(t, "global")
	c := coordinatortest.StartCluster(t, 3, coordinatortest.Options{TLS: files})
	leader := c.WaitLeader(15 * time.Second)
	c.Converged(10 * time.Second)

	servers, err := leader.Server().Node().Servers()
	if err != nil {
		t.Fatal(err)
	}
	var follower raft.Server
	for _, s := range servers {
		if string(s.ID) != leader.ID {
			follower = s
		}
	}
	leaderSrv := raft.Server{ID: raft.ServerID(leader.ID), Address: raft.ServerAddress(leader.RaftAddr)}
	forged := forgedState(t, coordinatortest.Start(t, coordinatortest.Options{}).Server)

	rogue := coordinatortest.NewTLS(t, "global")
	clientCert, clientKey := files.Issue(t, certs.Client, "global")
	otherCert, otherKey := files.Issue(t, certs.Server, "other")
	name := certs.ServerName("global")
	attackers := []struct {
		name string
		dial func(string, time.Duration) (net.Conn, error)
	}{
		{"plain TCP", plainDial},
		{"TLS, server certificate of another CA", tlsDial(t, rogue.CertFile, rogue.KeyFile, name)},
		{"TLS, client certificate of the cluster CA", tlsDial(t, clientCert, clientKey, name)},
		{"TLS, server certificate of the cluster CA for another cluster", tlsDial(t, otherCert, otherKey, name)},
		{"TLS, no certificate", func(addr string, timeout time.Duration) (net.Conn, error) {
			return tlsDialNoCert(addr, timeout, name)
		}},
	}
	targets := []raft.Server{leaderSrv, follower}
	for _, a := range attackers {
		t.Run(a.name, func(t *testing.T) {
			tr := newAttacker(t, a.dial)
			for _, target := range targets {
				before := map[string]raftView{}
				for _, n := range c.Nodes {
					before[n.ID] = viewOf(t, n.Server())
				}
				if err := requestVote(tr, target, follower, before[leader.ID].term); err == nil {
					t.Errorf("RequestVote to %s answered", target.ID)
				}
				if ok, err := installSnapshot(tr, target, servers, forged.install, before[leader.ID].term); err == nil || ok {
					t.Errorf("InstallSnapshot to %s answered: ok=%v", target.ID, ok)
				}
				for _, n := range c.Nodes {
					after := viewOf(t, n.Server())
					b := before[n.ID]
					if after.term != b.term || after.leaderID != b.leaderID || !bytes.Equal(after.state, b.state) {
						t.Fatalf("%s changed after attacks on %s: term %d→%d, leader %q→%q, state equal=%v",
							n.ID, target.ID, b.term, after.term, b.leaderID, after.leaderID, bytes.Equal(after.state, b.state))
					}
				}
			}
		})
	}
	// The cluster still replicates and the real admin token still works.
	if _, err := c.Client(c.AdminToken).SubmitJob(t.Context(), execJob()); err != nil {
		t.Fatalf("a write after the attacks: %v", err)
	}
	c.Converged(10 * time.Second)
}

// A connection that never speaks is closed after the handshake deadline,
// and while it is open the other peers are served (Accept does not wait
// on handshakes).
func TestRaftSilentPeerIsDropped(t *testing.T) {
	files := coordinatortest.NewTLS(t, "global")
	c := coordinatortest.StartCluster(t, 3, coordinatortest.Options{TLS: files})
	leader := c.WaitLeader(15 * time.Second)
	var silent []net.Conn
	for range 16 {
		conn, err := net.Dial("tcp", leader.RaftAddr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		silent = append(silent, conn)
	}
	began := time.Now()
	if _, err := c.Client(c.AdminToken).SubmitJob(t.Context(), execJob()); err != nil {
		t.Fatalf("a write while silent connections are open: %v", err)
	}
	c.Converged(10 * time.Second)
	for _, conn := range silent {
		_ = conn.SetReadDeadline(time.Now().Add(cluster.DefaultHandshakeTimeout + 5*time.Second))
		_, err := io.ReadAll(conn)
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("a silent connection was still open after %v", time.Since(began))
		}
	}
}
