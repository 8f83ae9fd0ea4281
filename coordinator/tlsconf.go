package coordinator

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"
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

// serverTLS is the listener's TLS configuration: TLS 1.2 at least, and,
// with a client CA, a verified client certificate on every connection.
func serverTLS(cfg Config) (*tls.Config, error) {
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
	return tc, nil
}

// forwardTransport is the HTTP transport for coordinator-to-coordinator
// requests (forwarding to the leader, formation, artifact relay). It
// trusts caFile (default: the system roots) and shows the client
// certificate when one is configured.
func forwardTransport(caFile, clientCert, clientKey string) (http.RoundTripper, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	// A dead leader's address does not answer at all: give up on it fast
	// so the request is answered no_leader and retried elsewhere.
	tr.DialContext = (&net.Dialer{Timeout: 2 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	tr.MaxIdleConnsPerHost = 256
	tr.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	if caFile != "" {
		pool, err := readPool(caFile)
		if err != nil {
			return nil, err
		}
		tr.TLSClientConfig.RootCAs = pool
	}
	if clientCert != "" {
		cert, err := tls.LoadX509KeyPair(clientCert, clientKey)
		if err != nil {
			return nil, fmt.Errorf("coordinator: load client certificate: %w", err)
		}
		tr.TLSClientConfig.Certificates = []tls.Certificate{cert}
	}
	return tr, nil
}
