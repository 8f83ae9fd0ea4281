package coordinator

import (
	"bufio"
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/cluster"
)

// Coordinators call each other over mutual TLS only, with their peer
// certificates (the operator's, or those the cluster key derives). A
// request is a peer's when the connection it came on was verified as
// one; internal routes (a coordinator's address, artifact copies) and
// forwarded source addresses are taken from peers only, never on the
// strength of a source address.
//
// A coordinator that serves clients plain HTTP (loopback, dev) still
// takes its peers' calls on the same port: the listener tells a TLS
// handshake (first byte 0x16, a handshake record) from an HTTP request
// and hands the former to TLS with the peer configuration. A coordinator
// that serves HTTPS picks the peer configuration by the server name the
// connection asks for (serverTLS).

// tlsHandshakeRecord is the first byte of every TLS connection.
const tlsHandshakeRecord = 0x16

// peerListener accepts plain HTTP from clients and TLS from peers.
type peerListener struct {
	net.Listener
	peer *tls.Config
}

func (l peerListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &sniffConn{raw: c, peer: l.peer}, nil
}

// sniffConn decides on its first Read whether it carries TLS (then it is
// a peer's connection, served by crypto/tls) or plain HTTP. The decision
// runs in the server's goroutine for the connection, under the read
// deadline the server set, never in Accept.
type sniffConn struct {
	raw  net.Conn
	peer *tls.Config

	once sync.Once
	conn net.Conn  // raw (behind the peeked reader) or a *tls.Conn
	tls  *tls.Conn // set when the connection is TLS
	err  error
}

// prefixed replays what was peeked before reading on.
type prefixed struct {
	net.Conn
	r *bufio.Reader
}

func (p prefixed) Read(b []byte) (int, error) { return p.r.Read(b) }

func (c *sniffConn) decide() {
	br := bufio.NewReaderSize(c.raw, 512)
	first, err := br.Peek(1)
	if err != nil {
		c.err = err
		return
	}
	inner := prefixed{Conn: c.raw, r: br}
	if first[0] != tlsHandshakeRecord {
		c.conn = inner
		return
	}
	c.tls = tls.Server(inner, c.peer)
	c.conn = c.tls
	c.err = c.tls.HandshakeContext(context.Background())
}

func (c *sniffConn) Read(b []byte) (int, error) {
	c.once.Do(c.decide)
	if c.err != nil {
		return 0, c.err
	}
	return c.conn.Read(b)
}

func (c *sniffConn) Write(b []byte) (int, error) {
	c.once.Do(c.decide)
	if c.err != nil {
		return 0, c.err
	}
	return c.conn.Write(b)
}

func (c *sniffConn) Close() error                       { return c.raw.Close() }
func (c *sniffConn) LocalAddr() net.Addr                { return c.raw.LocalAddr() }
func (c *sniffConn) RemoteAddr() net.Addr               { return c.raw.RemoteAddr() }
func (c *sniffConn) SetDeadline(t time.Time) error      { return c.raw.SetDeadline(t) }
func (c *sniffConn) SetReadDeadline(t time.Time) error  { return c.raw.SetReadDeadline(t) }
func (c *sniffConn) SetWriteDeadline(t time.Time) error { return c.raw.SetWriteDeadline(t) }

// connState is the TLS state of a connection that completed its
// handshake, if it is a TLS one.
func connState(c net.Conn) (tls.ConnectionState, bool) {
	switch c := c.(type) {
	case *tls.Conn:
		cs := c.ConnectionState()
		return cs, cs.HandshakeComplete
	case *sniffConn:
		if c.tls == nil {
			return tls.ConnectionState{}, false
		}
		cs := c.tls.ConnectionState()
		return cs, cs.HandshakeComplete
	}
	return tls.ConnectionState{}, false
}

// peerConn is what the server remembers of a connection: whether it is a
// verified peer's, decided once.
type peerConn struct {
	conn net.Conn
	once sync.Once
	peer bool
}

type peerConnKey struct{}

// withConn is the HTTP server's ConnContext: it lets isPeer find the
// request's connection.
func withConn(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, peerConnKey{}, &peerConn{conn: c})
}

// peerCheck reports whether a request came on a connection verified as a
// coordinator of this cluster: TLS, the cluster's server name asked for,
// and a client certificate that chains to the peer CA with that name.
// The check is made once per connection.
func peerCheck(p *cluster.PeerTLS) func(*http.Request) bool {
	return func(r *http.Request) bool {
		pc, ok := r.Context().Value(peerConnKey{}).(*peerConn)
		if !ok {
			return false
		}
		pc.once.Do(func() {
			cs, ok := connState(pc.conn)
			pc.peer = ok && cs.ServerName == p.ServerName && p.Verify(cs) == nil
		})
		return pc.peer
	}
}
