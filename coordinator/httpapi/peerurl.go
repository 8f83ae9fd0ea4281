package httpapi

import (
	"errors"
	"net"
	"net/url"
	"strconv"
)

// ErrPlainPeerURL refuses a call to another coordinator over plain HTTP:
// the request, a client's credential in it, would travel in the clear to
// an end nobody verified.
var ErrPlainPeerURL = errors.New("refusing to call another coordinator over plain http://")

// errPeerURLShape refuses an address that is not a base URL.
var errPeerURLShape = errors.New("not an http(s)://host:port base URL")

// PeerURL parses a coordinator's base URL for a call to it. Calls between
// coordinators always run over mutual TLS with peer certificates, whatever
// the URL says: an https:// URL is used as it is; an http:// URL is a
// plain listener's, and a plain listener takes its peers' TLS on the same
// port (coordinator/peerconn.go), so it is called as https://. Where the
// coordinators serve HTTPS (httpsPeers), an http:// URL can only be a
// mistake or an attack, and is refused.
func PeerURL(addr string, httpsPeers bool) (*url.URL, error) {
	u, err := url.Parse(addr)
	if err != nil || u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return nil, errPeerURLShape
	}
	host, port, err := net.SplitHostPort(u.Host)
	if err != nil || host == "" {
		return nil, errPeerURLShape
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return nil, errPeerURLShape
	}
	switch u.Scheme {
	case "https":
	case "http":
		if httpsPeers {
			return nil, ErrPlainPeerURL
		}
	default:
		return nil, errPeerURLShape
	}
	return &url.URL{Scheme: "https", Host: u.Host}, nil
}

// peerURL is PeerURL under this coordinator's setting.
func (s *Server) peerURL(addr string) (*url.URL, error) { return PeerURL(addr, s.httpsPeers) }
