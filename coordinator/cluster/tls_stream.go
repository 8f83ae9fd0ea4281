package cluster

import (
	"crypto/tls"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// tlsStreamLayer is Raft's transport over mutual TLS.
//
// Accept never handshakes: raft's NetworkTransport backs off its whole
// accept loop when Accept fails, so one bad client would delay every
// peer. The handshake runs instead on the connection's first Read or
// Write, in the goroutine raft gives each connection, under a deadline;
// a connection that fails it is closed before raft reads a byte of it.
// Dial handshakes at once, so a dialled peer is verified before the first
// RPC is written.
type tlsStreamLayer struct {
	*streamLayer
	peer   *PeerTLS
	server *tls.Config
	client *tls.Config
}

var _ raft.StreamLayer = (*tlsStreamLayer)(nil)

func newTLSStreamLayer(plain *streamLayer, peer *PeerTLS) (*tlsStreamLayer, error) {
	if err := peer.validate(); err != nil {
		return nil, err
	}
	return &tlsStreamLayer{streamLayer: plain, peer: peer, server: peer.ServerConfig(), client: peer.ClientConfig()}, nil
}

// Accept returns the next connection, its handshake still to come.
func (s *tlsStreamLayer) Accept() (net.Conn, error) {
	c, err := s.streamLayer.Accept()
	if err != nil {
		return nil, err
	}
	return &serverConn{Conn: tls.Server(c, s.server), timeout: s.peer.handshakeTimeout()}, nil
}

// Dial connects to a peer and verifies it before returning.
func (s *tlsStreamLayer) Dial(address raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	began := time.Now()
	raw, err := s.streamLayer.Dial(address, timeout)
	if err != nil {
		return nil, err
	}
	limit := s.peer.handshakeTimeout()
	if timeout > 0 {
		limit = min(limit, max(timeout-time.Since(began), 0))
	}
	c := tls.Client(raw, s.client)
	_ = raw.SetDeadline(time.Now().Add(limit))
	if err := c.Handshake(); err != nil {
		raw.Close()
		return nil, fmt.Errorf("raft TLS handshake with %s: %w", address, err)
	}
	_ = raw.SetDeadline(time.Time{})
	return c, nil
}

// serverConn is an accepted connection that completes its handshake, once,
// under a deadline, before the first byte is read or written.
type serverConn struct {
	*tls.Conn
	timeout time.Duration
	once    sync.Once
	err     error
}

func (c *serverConn) handshake() error {
	c.once.Do(func() {
		raw := c.NetConn()
		_ = raw.SetDeadline(time.Now().Add(c.timeout))
		if err := c.Conn.Handshake(); err != nil {
			c.err = fmt.Errorf("raft TLS handshake from %s: %w", c.RemoteAddr(), err)
			c.Conn.Close()
			return
		}
		// raft sets no deadline on accepted connections: clear ours.
		_ = raw.SetDeadline(time.Time{})
	})
	return c.err
}

func (c *serverConn) Read(b []byte) (int, error) {
	if err := c.handshake(); err != nil {
		return 0, err
	}
	return c.Conn.Read(b)
}

func (c *serverConn) Write(b []byte) (int, error) {
	if err := c.handshake(); err != nil {
		return 0, err
	}
	return c.Conn.Write(b)
}
