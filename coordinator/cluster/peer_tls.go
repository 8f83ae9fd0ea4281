package cluster

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"time"
)

// PeerTLS is mutual TLS between coordinators: every coordinator shows
// Certificate, trusts only Roots, and accepts a peer only when the peer's
// certificate carries ServerName (the cluster's server identity, e.g.
// server.global.gpulayer). The name is checked on both sides and never
// the address dialled, so a certificate from another CA, from another
// cluster, or a client certificate is refused.
type PeerTLS struct {
	Certificate tls.Certificate
	Roots       *x509.CertPool
	ServerName  string
	// HandshakeTimeout bounds a handshake (default 5 s), so a peer that
	// says nothing cannot hold a connection open.
	HandshakeTimeout time.Duration
}

// DefaultHandshakeTimeout bounds a TLS handshake between coordinators.
const DefaultHandshakeTimeout = 5 * time.Second

// ErrPeerIdentity refuses a certificate that does not carry the cluster's
// server name.
var ErrPeerIdentity = errors.New("peer certificate does not carry the cluster's server name")

func (p *PeerTLS) handshakeTimeout() time.Duration {
	if p.HandshakeTimeout > 0 {
		return p.HandshakeTimeout
	}
	return DefaultHandshakeTimeout
}

func (p *PeerTLS) validate() error {
	if p.Roots == nil || p.ServerName == "" || len(p.Certificate.Certificate) == 0 {
		return errors.New("cluster: peer TLS needs a certificate, a CA pool and the server name")
	}
	return nil
}

// ServerConfig is the accepting side: a verified client certificate with
// the server name is required.
func (p *PeerTLS) ServerConfig() *tls.Config {
	return &tls.Config{
		MinVersion:       tls.VersionTLS12,
		Certificates:     []tls.Certificate{p.Certificate},
		ClientCAs:        p.Roots,
		ClientAuth:       tls.RequireAndVerifyClientCert,
		VerifyConnection: p.verifyPeer,
		// Peer connections are long-lived; resumption saves nothing and
		// would carry a session across configurations.
		SessionTicketsDisabled: true,
	}
}

// ClientConfig is the dialling side: the peer's certificate must chain to
// Roots and name ServerName (whatever address was dialled), and this
// coordinator shows its own.
func (p *PeerTLS) ClientConfig() *tls.Config {
	return &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{p.Certificate},
		RootCAs:      p.Roots,
		ServerName:   p.ServerName,
	}
}

// Verify checks that a completed handshake's client certificate is a
// coordinator's of this cluster (the HTTP server asks it of requests on
// internal routes).
func (p *PeerTLS) Verify(cs tls.ConnectionState) error { return p.verifyPeer(cs) }

// verifyPeer runs on the accepting side after the handshake verified the
// chain. It checks the chain again here, against Roots, with the
// clientAuth usage and the server name, so the decision does not depend
// on how the TLS library treated the connection (a resumed session, or a
// configuration chosen per ClientHello).
func (p *PeerTLS) verifyPeer(cs tls.ConnectionState) error {
	if len(cs.PeerCertificates) == 0 {
		return ErrPeerIdentity
	}
	inter := x509.NewCertPool()
	for _, c := range cs.PeerCertificates[1:] {
		inter.AddCert(c)
	}
	_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{
		Roots:         p.Roots,
		Intermediates: inter,
		DNSName:       p.ServerName,
		KeyUsages:     []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	if err != nil {
		return fmt.Errorf("%w (%s): %v", ErrPeerIdentity, p.ServerName, err)
	}
	return nil
}
