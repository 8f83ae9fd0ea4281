package cluster

import (
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/hashicorp/raft"
)

// DialFunc opens a connection to another server's Raft address. Tests put
// a fault-injecting proxy in the path by replacing it.
type DialFunc func(address string, timeout time.Duration) (net.Conn, error)

// dialTimeout bounds a connection attempt to a peer: on a LAN a peer that
// does not answer within it is down, and waiting longer delays failover.
const dialTimeout = 2 * time.Second

// streamLayer is Raft's transport over plain TCP with an advertised address that
// may differ from the bound one (containers, NAT) and a replaceable dialer.
type streamLayer struct {
	net.Listener
	advertise net.Addr
	dial      DialFunc
}

var _ raft.StreamLayer = (*streamLayer)(nil)

// newStreamLayer binds Raft's listener: over mutual TLS when peer is set,
// plain TCP otherwise.
func newStreamLayer(bind, advertise string, dial DialFunc, peer *PeerTLS) (raft.StreamLayer, error) {
	plain, err := newPlainStreamLayer(bind, advertise, dial)
	if err != nil || peer == nil {
		return plain, err
	}
	secure, err := newTLSStreamLayer(plain, peer)
	if err != nil {
		plain.Close()
		return nil, err
	}
	return secure, nil
}

func newPlainStreamLayer(bind, advertise string, dial DialFunc) (*streamLayer, error) {
	ln, err := net.Listen("tcp", bind)
	if err != nil {
		return nil, err
	}
	var adv net.Addr = ln.Addr()
	if advertise != "" {
		host, port, err := net.SplitHostPort(advertise)
		if err != nil || host == "" || port == "" {
			ln.Close()
			return nil, fmt.Errorf("raft advertise address %q: want host:port", advertise)
		}
		if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
			ln.Close()
			return nil, errors.New("raft advertise address must name a reachable host, not 0.0.0.0")
		}
		// Kept as written: a host name is resolved at each dial, so a
		// peer whose address changes (a restarted container) is still
		// found by name.
		adv = advertisedAddr(advertise)
	} else if tcp, ok := adv.(*net.TCPAddr); ok && tcp.IP.IsUnspecified() {
		ln.Close()
		return nil, errors.New("raft binds all interfaces: give an advertise address that peers can reach")
	}
	if dial == nil {
		dial = func(address string, timeout time.Duration) (net.Conn, error) {
			return net.DialTimeout("tcp", address, min(timeout, dialTimeout))
		}
	}
	return &streamLayer{Listener: ln, advertise: adv, dial: dial}, nil
}

// advertisedAddr is an advertised host:port, possibly a host name.
type advertisedAddr string

func (a advertisedAddr) Network() string { return "tcp" }
func (a advertisedAddr) String() string  { return string(a) }

// Addr is the advertised address: what peers dial.
func (s *streamLayer) Addr() net.Addr { return s.advertise }

// Dial connects to a peer.
func (s *streamLayer) Dial(address raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	return s.dial(string(address), timeout)
}
