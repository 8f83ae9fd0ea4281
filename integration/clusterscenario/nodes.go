package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// node is one coordinator: its Raft id, the URL this program reaches it
// at, the URL the cluster advertises for it, and its container.
type node struct {
	id        string
	url       string
	advertise string
	container string
}

// transport reaches the coordinators from outside their network: a
// request for an advertised address (a leader redirect names
// https://c2:7070, which does not resolve here) is dialled at the matching
// published address instead. TLS still verifies the advertised name (c2),
// which each coordinator's certificate carries; caFile is trusted for it.
func transport(nodes []*node, caFile string) (*http.Transport, error) {
	hostMap := map[string]string{}
	for _, n := range nodes {
		adv, err := url.Parse(n.advertise)
		if err != nil {
			return nil, fmt.Errorf("advertised URL %q: %w", n.advertise, err)
		}
		pub, err := url.Parse(n.url)
		if err != nil {
			return nil, fmt.Errorf("coordinator URL %q: %w", n.url, err)
		}
		hostMap[hostPort(adv)] = hostPort(pub)
	}
	d := &net.Dialer{Timeout: 2 * time.Second, KeepAlive: 15 * time.Second}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	tr.MaxIdleConnsPerHost = 16
	tr.ResponseHeaderTimeout = 15 * time.Second
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("no certificates in %s", caFile)
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if to, ok := hostMap[addr]; ok {
			addr = to
		}
		return d.DialContext(ctx, network, addr)
	}
	return tr, nil
}

// slowLogger logs every request that took longer than slowRequest: a
// request that hangs across a failover is worth seeing.
type slowLogger struct{ next http.RoundTripper }

const slowRequest = 3 * time.Second

func (l slowLogger) RoundTrip(req *http.Request) (*http.Response, error) {
	began := time.Now()
	resp, err := l.next.RoundTrip(req)
	if d := time.Since(began); d > slowRequest {
		outcome := ""
		if err != nil {
			outcome = err.Error()
		} else {
			outcome = resp.Status
		}
		logf("slow request: %s %s took %.1fs: %s", req.Method, req.URL, d.Seconds(), outcome)
	}
	return resp, err
}

func hostPort(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	if u.Scheme == "https" {
		return u.Host + ":443"
	}
	return u.Host + ":80"
}

// prober asks one coordinator about itself, with no failover: these
// answers are local to the node asked.
type prober struct {
	http  *http.Client
	token string
}

func (p *prober) get(ctx context.Context, n *node, path string, auth bool, out any) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, n.url+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set(api.ProtocolHeader, api.ProtocolVersion)
	if auth {
		req.Header.Set("Authorization", "Bearer "+p.token)
	}
	resp, err := p.http.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", n.id, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("%s %s: %w", n.id, path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: HTTP %d: %s", n.id, path, resp.StatusCode, strings.TrimSpace(string(b)))
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("%s %s: %w", n.id, path, err)
	}
	return nil
}

// leader is the leader a node believes in ("" when it knows none).
func (p *prober) leader(ctx context.Context, n *node) (api.LeaderResponse, error) {
	var out api.LeaderResponse
	err := p.get(ctx, n, "/v1/status/leader", false, &out)
	return out, err
}

// digest is the state a node has applied, read from the node itself.
func (p *prober) digest(ctx context.Context, n *node) (api.DigestResponse, error) {
	var out api.DigestResponse
	err := p.get(ctx, n, "/v1/operator/local/digest", true, &out)
	return out, err
}
