package coordinator

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/cluster"
	"github.com/gpulayer/gpulayer/coordinator/httpapi"
	"github.com/gpulayer/gpulayer/internal/certs"
)

// readPool reads a PEM bundle into a certificate pool.
func readPool(file string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("coordinator: read %s: %w", file, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("coordinator: no certificates in %s", file)
	}
	return pool, nil
}

// peerTLS loads the mutual TLS between coordinators: the operator's
// certificates (--raft-tls-*), or one derived from the cluster key
// (clusterkey.go). There is always one: Raft and calls between
// coordinators are never plaintext.
func peerTLS(cfg Config) (*cluster.PeerTLS, error) {
	if !cfg.raftTLS() {
		key, err := clusterKey(cfg)
		if err != nil {
			return nil, err
		}
		cert, pool, err := certs.DerivedPeer(key, cfg.ClusterName, cfg.Clock.Now())
		if err != nil {
			return nil, fmt.Errorf("coordinator: cluster key: %w", err)
		}
		return &cluster.PeerTLS{Certificate: cert, Roots: pool, ServerName: certs.ServerName(cfg.ClusterName)}, nil
	}
	cert, err := tls.LoadX509KeyPair(cfg.RaftTLSCert, cfg.RaftTLSKey)
	if err != nil {
		return nil, fmt.Errorf("coordinator: load Raft TLS key pair: %w", err)
	}
	pool, err := readPool(cfg.RaftCAFile)
	if err != nil {
		return nil, err
	}
	name := certs.ServerName(cfg.ClusterName)
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		return nil, fmt.Errorf("coordinator: Raft TLS certificate: %w", err)
	}
	// Refuse at start what every peer would refuse later, with a clearer
	// message than a handshake failure.
	if err := leaf.VerifyHostname(name); err != nil {
		return nil, fmt.Errorf("coordinator: %s does not carry the cluster's server name %s (make it with `gpulayer tls cert create --server --cluster %s`)", cfg.RaftTLSCert, name, cfg.ClusterName)
	}
	inter := x509.NewCertPool()
	for _, der := range cert.Certificate[1:] {
		if c, err := x509.ParseCertificate(der); err == nil {
			inter.AddCert(c)
		}
	}
	// It serves (serverAuth) and dials (clientAuth): both are needed.
	for _, use := range []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth} {
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, Intermediates: inter, DNSName: name, KeyUsages: []x509.ExtKeyUsage{use}}); err != nil {
			return nil, fmt.Errorf("coordinator: %s is not a server certificate of %s with the serverAuth and clientAuth usages: %w", cfg.RaftTLSCert, cfg.RaftCAFile, err)
		}
	}
	return &cluster.PeerTLS{Certificate: cert, Roots: pool, ServerName: name}, nil
}

// serverTLS is the listener's TLS configuration: TLS 1.2 at least, and,
// with a client CA, a verified client certificate on every connection.
// With peer TLS, a connection that asks for the cluster's server name
// (SNI), which is what other coordinators do, is served the peer
// certificate and must show one too.
func serverTLS(cfg Config, peer *cluster.PeerTLS) (*tls.Config, error) {
	if cfg.TLSCert == "" {
		return nil, nil
	}
	cert, err := tls.LoadX509KeyPair(cfg.TLSCert, cfg.TLSKey)
	if err != nil {
		return nil, fmt.Errorf("coordinator: load TLS key pair: %w", err)
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}
	if cfg.ClientCAFile != "" {
		pool, err := readPool(cfg.ClientCAFile)
		if err != nil {
			return nil, err
		}
		tc.ClientCAs = pool
		tc.ClientAuth = tls.RequireAndVerifyClientCert
	}
	if peer != nil {
		peerConf := peer.ServerConfig()
		tc.GetConfigForClient = func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
			if hello.ServerName == peer.ServerName {
				return peerConf, nil
			}
			return nil, nil
		}
	}
	return tc, nil
}

// forwardTransport is the HTTP transport for coordinator-to-coordinator
// requests (forwarding to the leader, formation, address registration,
// artifact copies). It speaks TLS only, verifies that the other end is a
// coordinator of the cluster (the peer CA and the cluster's server name,
// whatever the URL's host), and shows this coordinator's peer
// certificate. A plain http:// URL is refused (peerURL turns a plain
// listener's URL into https:// before a request is made).
func forwardTransport(peer *cluster.PeerTLS) http.RoundTripper {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	// A dead leader's address does not answer at all: give up on it fast
	// so the request is answered no_leader and retried elsewhere.
	tr.DialContext = (&net.Dialer{Timeout: 2 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	tr.MaxIdleConnsPerHost = 256
	tr.TLSClientConfig = peer.ClientConfig()
	tr.ForceAttemptHTTP2 = false
	return httpsOnly{tr}
}

// httpsOnly refuses to send a request anywhere but https://: a peer's
// address that says http:// would carry a client's credential in the
// clear to an end nobody verified.
type httpsOnly struct{ next http.RoundTripper }

func (h httpsOnly) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Scheme != "https" {
		if r.Body != nil {
			r.Body.Close()
		}
		return nil, fmt.Errorf("%w: %s", httpapi.ErrPlainPeerURL, r.URL.Redacted())
	}
	return h.next.RoundTrip(r)
}
