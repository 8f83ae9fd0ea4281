package coordinator_test

import (
	"bytes"
	"crypto/tls"
	"io"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/gpulayer/gpulayer/coordinator"
	"github.com/gpulayer/gpulayer/coordinator/fsm"
)

// attacker speaks Raft's own wire format (hashicorp/raft's
// NetworkTransport: an RPC type byte, then msgpack) to a coordinator's
// Raft port, over whatever dial gives it: plain TCP, or TLS with a
// certificate of the attacker's choosing.
type attacker struct {
	net.Listener
	dial func(address string, timeout time.Duration) (net.Conn, error)
}

func (a *attacker) Addr() net.Addr { return a.Listener.Addr() }

func (a *attacker) Dial(address raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	return a.dial(string(address), timeout)
}

func newAttacker(t *testing.T, dial func(string, time.Duration) (net.Conn, error)) *raft.NetworkTransport {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tr := raft.NewNetworkTransport(&attacker{Listener: ln, dial: dial}, 1, 3*time.Second, io.Discard)
	t.Cleanup(func() { tr.Close() })
	return tr
}

func plainDial(address string, timeout time.Duration) (net.Conn, error) {
	return net.DialTimeout("tcp", address, timeout)
}

// tlsDial shows certFile and asks for serverName, but trusts whatever the
// target shows: whether the connection is refused is the target's call.
func tlsDial(t *testing.T, certFile, keyFile, serverName string) func(string, time.Duration) (net.Conn, error) {
	t.Helper()
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	conf := &tls.Config{Certificates: []tls.Certificate{cert}, ServerName: serverName, InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}
	return func(address string, timeout time.Duration) (net.Conn, error) {
		return tls.DialWithDialer(&net.Dialer{Timeout: timeout}, "tcp", address, conf)
	}
}

// tlsDialNoCert completes a TLS handshake without a certificate.
func tlsDialNoCert(address string, timeout time.Duration, serverName string) (net.Conn, error) {
	conf := &tls.Config{ServerName: serverName, InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}
	return tls.DialWithDialer(&net.Dialer{Timeout: timeout}, "tcp", address, conf)
}

// raftView is what an attack would change on the node it targets.
type raftView struct {
	term     uint64
	leaderID string
	state    []byte
}

func viewOf(t *testing.T, s *coordinator.Server) raftView {
	t.Helper()
	term, err := strconv.ParseUint(s.Node().Stats()["term"], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := s.Store().Snapshot(&buf); err != nil {
		t.Fatal(err)
	}
	_, id := s.Node().Leader()
	return raftView{term: term, leaderID: id, state: buf.Bytes()}
}

// requestVote asks target to vote for candidate (a real member's id and
// address, as /v1/status/peers shows them) in a much later term, as a
// leadership transfer, which a leader obeys by stepping down.
func requestVote(tr *raft.NetworkTransport, target raft.Server, candidate raft.Server, term uint64) error {
	req := &raft.RequestVoteRequest{
		RPCHeader:          raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax, ID: []byte(candidate.ID), Addr: []byte(candidate.Address)},
		Term:               term + 10,
		LastLogIndex:       1 << 40,
		LastLogTerm:        term + 10,
		LeadershipTransfer: true,
	}
	var resp raft.RequestVoteResponse
	return tr.RequestVote(target.ID, target.Address, req, &resp)
}

// installSnapshot sends target a hand-made snapshot (state in the FSM's
// format) from a "leader" of a later term, keeping the real membership so
// the target accepts it.
func installSnapshot(tr *raft.NetworkTransport, target raft.Server, servers []raft.Server, state []byte, term uint64) (bool, error) {
	req := &raft.InstallSnapshotRequest{
		RPCHeader:          raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax, ID: []byte(servers[0].ID), Addr: []byte(servers[0].Address)},
		SnapshotVersion:    raft.SnapshotVersionMax,
		Term:               term + 10,
		Leader:             []byte(servers[0].Address),
		LastLogIndex:       1 << 40,
		LastLogTerm:        term + 10,
		Configuration:      raft.EncodeConfiguration(raft.Configuration{Servers: servers}),
		ConfigurationIndex: 1 << 40,
		Size:               int64(len(state)),
	}
	var resp raft.InstallSnapshotResponse
	err := tr.InstallSnapshot(target.ID, target.Address, req, &resp, bytes.NewReader(state))
	return resp.Success, err
}

// forgedSnapshot is a whole coordinator state an attacker made: their own
// single-node coordinator, with their own admin token. install is the
// snapshot Raft would install (sections, fsm.Save); store its store
// section, what viewOf reads.
type forgedSnapshot struct {
	install, store []byte
}

func forgedState(t *testing.T, s *coordinator.Server) forgedSnapshot {
	t.Helper()
	var install, store bytes.Buffer
	if err := fsm.Save(s.Store(), &install); err != nil {
		t.Fatal(err)
	}
	if err := s.Store().Snapshot(&store); err != nil {
		t.Fatal(err)
	}
	return forgedSnapshot{install: install.Bytes(), store: store.Bytes()}
}
