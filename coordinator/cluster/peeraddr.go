package cluster

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
)

// ErrBadPeer is a Raft peer id or address that cannot be a member: an
// address Raft cannot dial, added to the configuration, counts toward
// the quorum and never answers.
var ErrBadPeer = errors.New("bad raft peer")

// Bounds on a peer's id and address.
const (
	maxPeerID   = 128
	maxPeerAddr = 256
	maxHostName = 253
)

// peerIDPattern: letters, digits and . _ - : [ ], as a node id that
// defaults to its Raft address ("10.0.0.1:7000", "[::1]:7000") has.
var peerIDPattern = regexp.MustCompile(`^[A-Za-z0-9\[][A-Za-z0-9._:\[\]-]*$`)

// hostLabel is one label of a DNS name.
var hostLabel = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$`)

// CheckPeer checks a Raft peer's id and address: the id at most 128
// bytes of peerIDPattern; the address host:port, no scheme, at most 256
// bytes, the port 1 to 65535 in decimal, the host an IP address (not the
// unspecified one) or a DNS name.
func CheckPeer(id, addr string) error {
	if id == "" || len(id) > maxPeerID || !peerIDPattern.MatchString(id) {
		return fmt.Errorf("%w: node id %q: 1 to %d bytes of letters, digits and . _ - : [ ]", ErrBadPeer, id, maxPeerID)
	}
	return CheckPeerAddr(addr)
}

// CheckPeerAddr checks a Raft peer's address (CheckPeer).
func CheckPeerAddr(addr string) error {
	if addr == "" || len(addr) > maxPeerAddr {
		return fmt.Errorf("%w: raft address: 1 to %d bytes of host:port", ErrBadPeer, maxPeerAddr)
	}
	if strings.Contains(addr, "://") {
		return fmt.Errorf("%w: raft address %q: host:port, without a scheme", ErrBadPeer, addr)
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%w: raft address %q: not host:port", ErrBadPeer, addr)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 || port[0] < '0' || port[0] > '9' {
		return fmt.Errorf("%w: raft address %q: port %q is not 1 to 65535", ErrBadPeer, addr, port)
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if ip.IsUnspecified() {
			return fmt.Errorf("%w: raft address %q: the unspecified address is no peer's", ErrBadPeer, addr)
		}
		return nil
	}
	if !isHostName(host) {
		return fmt.Errorf("%w: raft address %q: host %q is neither an IP address nor a DNS name", ErrBadPeer, addr, host)
	}
	return nil
}

// isHostName reports whether h is a DNS name: dot-separated labels of
// letters, digits and inner hyphens, 63 bytes each, 253 in all.
func isHostName(h string) bool {
	h = strings.TrimSuffix(h, ".")
	if h == "" || len(h) > maxHostName {
		return false
	}
	for label := range strings.SplitSeq(h, ".") {
		if !hostLabel.MatchString(label) {
			return false
		}
	}
	return true
}
