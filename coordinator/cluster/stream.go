package cluster

import (
	"errors"
	"net"
	"time"

	"github.com/hashicorp/raft"
)

// DialFunc opens a connection to another server's Raft address. Tests put
// a fault-injecting proxy in the path by replacing it.
type DialFunc func(address string, timeout time.Duration) (net.Conn, error)

// streamLayer is Raft's transport over TCP with an advertised address that
// may differ from the bound one (containers, NAT) and a replaceable dialer.
type streamLayer struct {
	net.Listener
	advertise net.Addr
	dial      DialFunc
}

var _ raft.StreamLayer = (*streamLayer)(nil)

func newStreamLayer(bind, advertise string, dial DialFunc) (*streamLayer, error) {
	ln, err := net.Listen("tcp", bind)
	if err != nil {
		return nil, err
	}
	adv := ln.Addr()
	if advertise != "" {
		a, err := net.ResolveTCPAddr("tcp", advertise)
		if err != nil {
			ln.Close()
			return nil, err
		}
		if a.IP == nil || a.IP.IsUnspecified() {
			ln.Close()
			return nil, errors.New("raft advertise address must name a reachable host, not 0.0.0.0")
		}
		adv = a
	} else if tcp, ok := adv.(*net.TCPAddr); ok && tcp.IP.IsUnspecified() {
		ln.Close()
		return nil, errors.New("raft binds all interfaces: give an advertise address that peers can reach")
	}
	if dial == nil {
		dial = func(address string, timeout time.Duration) (net.Conn, error) {
			return net.DialTimeout("tcp", address, timeout)
		}
	}
	return &streamLayer{Listener: ln, advertise: adv, dial: dial}, nil
}

// Addr is the advertised address: what peers dial.
func (s *streamLayer) Addr() net.Addr { return s.advertise }

// Dial connects to a peer.
func (s *streamLayer) Dial(address raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	return s.dial(string(address), timeout)
}
