package client

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// Config configures a Client.
type Config struct {
	// Addrs are coordinator base URLs ("https://host:port"); any will do.
	Addrs []string
	// Token is the bearer credential.
	Token string
	// CAFile is a PEM bundle to trust for HTTPS, besides the system roots.
	CAFile string
	// ClientCert and ClientKey are a PEM certificate and key shown to
	// coordinators that require client certificates (mTLS).
	ClientCert string
	ClientKey  string
	// HTTPClient overrides the transport (tests).
	HTTPClient *http.Client
	// MaxRetryWait bounds how long a call keeps retrying while no
	// coordinator can serve it (default 30 s).
	MaxRetryWait time.Duration
	// FailFast makes a call give up, instead of retrying for MaxRetryWait,
	// as soon as every address has refused or timed out its dial, and once
	// every address has failed and FailFastWait has passed when some of
	// them answered (no leader: no quorum, or an election under way) or
	// sent no answer within AnswerTimeout: for a person at a terminal, and
	// for callers that retry on their own terms (see also FailFast, the
	// same for one call). The error is then a *NoQuorumError naming every
	// address and what it said.
	FailFast bool
	// FailFastWait is how long a FailFast call keeps trying while every
	// address has failed but not all refused the connection (default
	// DefaultFailFastWait).
	FailFastWait time.Duration
	// AnswerTimeout bounds how long one try waits for a coordinator's
	// answer once its request is sent; the next address is then tried
	// (a write that is not idempotent is not: its outcome is unknown).
	// Long polls add their own wait; log streams, artifact transfers and
	// snapshots are not bounded. 0: no bound, except for FailFast calls
	// (DefaultFailFastAnswerTimeout); negative: no bound at all.
	AnswerTimeout time.Duration
}

type failFastKey struct{}

// FailFast marks ctx's calls to give up as soon as every address has
// refused or timed out its dial (Config.FailFast for one call).
func FailFast(ctx context.Context) context.Context {
	return context.WithValue(ctx, failFastKey{}, true)
}

// Client talks to a coordinator cluster. It is safe for concurrent use.
type Client struct {
	http *http.Client
	// once sends writes that are not idempotent, each on a new connection
	// (the same as http when Config.HTTPClient is given).
	once     *http.Client
	maxWait  time.Duration
	failFast bool
	// fastWait is FailFastWait; answerTimeout is AnswerTimeout.
	fastWait      time.Duration
	answerTimeout time.Duration

	mu     sync.Mutex
	addrs  []string
	cur    int
	token  string
	leader string
}

// ErrNoAddress is returned by New without any coordinator address.
var ErrNoAddress = errors.New("client: no coordinator address")

// ErrOutcomeUnknown is wrapped by the error of a write whose request
// reached a coordinator but whose answer was lost (the connection broke
// after the request was sent, or the answer came cut short): it may or
// may not have taken effect. The client resends such a write only when it
// is idempotent; otherwise the caller decides (read the state, or send a
// write that is safe to repeat).
var ErrOutcomeUnknown = errors.New("the outcome is unknown: the answer was lost after the request was sent")

// New builds a client.
func New(cfg Config) (*Client, error) {
	var addrs []string
	for _, a := range cfg.Addrs {
		for _, part := range strings.Split(a, ",") {
			if part = strings.TrimSpace(part); part != "" {
				if !strings.Contains(part, "://") {
					part = "http://" + part
				}
				addrs = append(addrs, strings.TrimRight(part, "/"))
			}
		}
	}
	if len(addrs) == 0 {
		return nil, ErrNoAddress
	}
	hc, once := cfg.HTTPClient, (*http.Client)(nil)
	if hc == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		// A coordinator that died does not answer a dial at all: move to
		// the next address after a short wait instead of the OS default.
		tr.DialContext = (&net.Dialer{Timeout: 2 * time.Second, KeepAlive: 30 * time.Second}).DialContext
		tr.MaxIdleConnsPerHost = 64
		tr.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
		if cfg.CAFile != "" {
			pem, err := os.ReadFile(cfg.CAFile)
			if err != nil {
				return nil, fmt.Errorf("client: read CA file: %w", err)
			}
			pool, err := x509.SystemCertPool()
			if err != nil || pool == nil {
				pool = x509.NewCertPool()
			}
			if !pool.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("client: no certificates in %s", cfg.CAFile)
			}
			tr.TLSClientConfig.RootCAs = pool
		}
		if (cfg.ClientCert == "") != (cfg.ClientKey == "") {
			return nil, errors.New("client: a client certificate needs its key, and the key its certificate")
		}
		if cfg.ClientCert != "" {
			cert, err := tls.LoadX509KeyPair(cfg.ClientCert, cfg.ClientKey)
			if err != nil {
				return nil, fmt.Errorf("client: load client certificate: %w", err)
			}
			tr.TLSClientConfig.Certificates = []tls.Certificate{cert}
		}
		hc = &http.Client{Transport: tr}
		// Writes that are not safe to repeat go over a connection of their
		// own: on a pooled one, a coordinator that closed it (stopped, or
		// dropped it as idle) and one that read the request and then died
		// both look the same (EOF), so the client could not tell whether
		// to resend. On a new connection, a stopped coordinator refuses
		// the dial, which is safe to retry elsewhere.
		fresh := tr.Clone()
		fresh.DisableKeepAlives = true
		once = &http.Client{Transport: fresh}
	}
	if once == nil {
		once = hc
	}
	wait := cfg.MaxRetryWait
	if wait == 0 {
		wait = 30 * time.Second
	}
	fastWait := cfg.FailFastWait
	if fastWait <= 0 {
		fastWait = DefaultFailFastWait
	}
	return &Client{http: hc, once: once, maxWait: wait, failFast: cfg.FailFast, fastWait: fastWait, answerTimeout: cfg.AnswerTimeout,
		addrs: addrs, token: cfg.Token}, nil
}

// SetToken replaces the bearer credential.
func (c *Client) SetToken(t string) {
	c.mu.Lock()
	c.token = t
	c.mu.Unlock()
}

// Addrs returns the configured coordinator addresses.
func (c *Client) Addrs() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.addrs...)
}

// tlsConfig is the TLS configuration of the client's transport (nil: the
// default, or a transport the caller gave).
func (c *Client) tlsConfig() *tls.Config {
	if tr, ok := c.http.Transport.(*http.Transport); ok {
		return tr.TLSClientConfig
	}
	return nil
}

func (c *Client) base() (string, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.leader != "" {
		return c.leader, c.token
	}
	return c.addrs[c.cur%len(c.addrs)], c.token
}

func (c *Client) rotate(failed string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.leader == failed {
		c.leader = ""
	}
	if c.addrs[c.cur%len(c.addrs)] == failed {
		c.cur++
	}
}

func (c *Client) setLeader(addr string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.leader = strings.TrimRight(addr, "/")
}

// Do sends one JSON request and decodes a JSON answer into out (if not
// nil). Errors from the coordinator are *api.Error. It retries on another
// coordinator when a node cannot be reached, has no leader, or redirects,
// and waits out rate_limited answers (Retry-After), within MaxRetryWait.
func (c *Client) Do(ctx context.Context, method, path string, in, out any) error {
	resp, err := c.send(ctx, method, path, in)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil
	}
	if err := decodeJSON(resp.Body, out); err != nil {
		return fmt.Errorf("client: decode %s %s answer: %w (%w)", method, path, ErrOutcomeUnknown, err)
	}
	return nil
}

// noToken marks a request sent without any bearer token.
const noToken = "\x00none"

// doAs is Do with a given bearer token ("" sends none).
func (c *Client) doAs(ctx context.Context, token, method, path string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("client: encode %s %s: %w", method, path, err)
	}
	if token == "" {
		token = noToken
	}
	resp, err := c.sendWith(ctx, token, method, path, body, "application/json")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := decodeJSON(resp.Body, out); err != nil {
		return fmt.Errorf("client: decode %s %s answer: %w (%w)", method, path, ErrOutcomeUnknown, err)
	}
	return nil
}

func decodeJSON(r io.Reader, out any) error { return json.NewDecoder(r).Decode(out) }

// send performs a JSON request with failover and returns a 2xx response.
func (c *Client) send(ctx context.Context, method, path string, in any) (*http.Response, error) {
	var body []byte
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, fmt.Errorf("client: encode %s %s: %w", method, path, err)
		}
		body = b
	}
	return c.sendRaw(ctx, method, path, body, "application/json")
}

// sendRaw performs a request whose body is already encoded.
func (c *Client) sendRaw(ctx context.Context, method, path string, body []byte, contentType string) (*http.Response, error) {
	return c.sendWith(ctx, "", method, path, body, contentType)
}

// sendWith performs a request; a non-empty override replaces the client's
// token (noToken: none at all).
func (c *Client) sendWith(ctx context.Context, override, method, path string, body []byte, contentType string) (*http.Response, error) {
	var open func() (io.ReadCloser, int64, error)
	if body != nil {
		open = func() (io.ReadCloser, int64, error) {
			return io.NopCloser(bytes.NewReader(body)), int64(len(body)), nil
		}
	}
	return c.sendBody(ctx, override, method, path, open, contentType)
}

// sendBody performs a request whose body open gives afresh for each try
// (nil: no body), with its length.
//
// When every configured address has failed the call (no connection, no
// answer, no leader) and the call gives up (FailFast, or MaxRetryWait
// spent), the error is a *NoQuorumError naming each address and what it
// said. A write that is not idempotent is retried only where it cannot
// have reached a coordinator (a refused dial, a pooled connection closed
// before it was read) or was answered not applied (no_leader, not_leader
// without X-GpuLayer-Outcome: unknown).
func (c *Client) sendBody(ctx context.Context, override, method, path string, open func() (io.ReadCloser, int64, error), contentType string) (*http.Response, error) {
	start := time.Now()
	deadline := start.Add(c.maxWait)
	backoff := 50 * time.Millisecond
	const maxBackoff = 250 * time.Millisecond
	failFast, _ := ctx.Value(failFastKey{}).(bool)
	failFast = failFast || c.failFast
	limit := c.answerLimit(ctx, failFast)
	tried := newTries(c.Addrs())
	for attempt := 0; ; attempt++ {
		base, token := c.base()
		switch override {
		case "":
		case noToken:
			token = ""
		default:
			token = override
		}
		wait := time.Duration(0)
		tctx, watch := watchAnswer(ctx, limit)
		req, err := http.NewRequestWithContext(tctx, method, base+path, nil)
		if err != nil {
			_, _ = watch.settle(nil, err)
			return nil, fmt.Errorf("client: %w", err)
		}
		if open != nil {
			rc, n, err := open()
			if err != nil {
				_, _ = watch.settle(nil, err)
				return nil, fmt.Errorf("client: %w", err)
			}
			req.Body, req.ContentLength = rc, n
			if n == 0 {
				req.Body = http.NoBody
				rc.Close()
			}
			req.Header.Set("Content-Type", contentType)
			if n > 0 && expectsContinue(ctx) {
				req.Header.Set("Expect", "100-continue")
			}
		}
		req.Header.Set(api.ProtocolHeader, api.ProtocolVersion)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		hc := c.http
		if method != http.MethodGet && !isIdempotent(ctx) {
			hc = c.once
		}
		resp, err := watch.settle(hc.Do(req))
		retry := false
		var apiErr *api.Error
		switch {
		case err != nil:
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if !retryableTransport(err, method) && !isIdempotent(ctx) {
				return nil, fmt.Errorf("client: %s %s: %w (%s: %w)", method, path, ErrOutcomeUnknown, base, err)
			}
			tried.fail(base, err)
			c.rotate(base)
			retry = true
			apiErr = nil
			err = fmt.Errorf("client: %s %s: %w", method, path, err)
		case resp.StatusCode >= 200 && resp.StatusCode < 300:
			return resp, nil
		default:
			apiErr, err = decodeError(resp)
			resp.Body.Close()
			if err != nil {
				// The answer was cut short: the coordinator got the request
				// and answered, but not what it said.
				if method != http.MethodGet && !isIdempotent(ctx) {
					return nil, fmt.Errorf("client: %s %s: %w (%w)", method, path, ErrOutcomeUnknown, err)
				}
				tried.fail(base, err)
				c.rotate(base)
				retry = true
				apiErr = nil
				err = fmt.Errorf("client: %s %s: %w", method, path, err)
				break
			}
			if resp.Header.Get(api.HeaderOutcome) == api.OutcomeUnknown && !isIdempotent(ctx) {
				// The write may have been applied: resending it could
				// apply it twice. The caller decides.
				return nil, apiErr
			}
			switch apiErr.Code {
			case api.CodeNotLeader:
				tried.fail(base, apiErr)
				if apiErr.Leader != "" && apiErr.Leader != base {
					c.setLeader(apiErr.Leader)
				} else {
					c.rotate(base)
				}
				retry = true
			case api.CodeNoLeader:
				tried.fail(base, apiErr)
				c.rotate(base)
				retry = true
			case api.CodeRateLimited:
				tried.answered(base)
				wait = time.Duration(max(apiErr.RetryAfterSeconds, 1)) * time.Second
				retry = true
			default:
				return nil, apiErr
			}
			err = apiErr
		}
		if retry && wait == 0 && tried.all() {
			// Every address has failed the call. Nothing listening
			// anywhere ends a fail-fast call at once; coordinators that
			// answer without a leader, or not at all, get FailFastWait
			// (an election ends in a second or two); others retry until
			// MaxRetryWait is spent.
			if failFast && (tried.undialed() || time.Since(start) >= c.fastWait) || time.Now().After(deadline) {
				return nil, tried.err(method, path)
			}
		}
		if !retry || time.Now().After(deadline) {
			return nil, err
		}
		if wait > 0 {
			if time.Now().Add(wait).After(deadline) {
				return nil, err
			}
			select {
			case <-time.After(wait):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			continue
		}
		if attempt > 0 {
			select {
			case <-time.After(backoff):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			// A new leader takes office in about a second on a LAN; a
			// short cap finds it soon after without hammering anyone.
			backoff = min(backoff*2, maxBackoff)
		}
	}
}

// isDialError reports a connection that could not be made (refused,
// timed out, no route): the request never left.
func isDialError(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// retryableTransport reports whether a transport error means the request
// never reached a server (so it is safe to send elsewhere), or the request
// is a read.
func retryableTransport(err error, method string) bool {
	if method == http.MethodGet {
		return true
	}
	if isDialError(err) {
		return true
	}
	// net/http says "server closed idle connection" when a pooled
	// connection was closed before the server read the request (a
	// coordinator that stopped): nothing was processed. A connection that
	// breaks once the request is sent (EOF, a reset) may have carried it
	// to a coordinator that acted on it: not retryable.
	return strings.Contains(err.Error(), "server closed idle connection")
}

// decodeError reads an error answer. It fails only when the body could
// not be read whole (the connection broke); a body that is whole but not
// the protocol's error (a proxy's page) becomes an internal error that
// quotes it.
func decodeError(resp *http.Response) (*api.Error, error) {
	var body api.ErrorBody
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("reading the HTTP %d answer: %w", resp.StatusCode, err)
	}
	if err := json.Unmarshal(b, &body); err != nil || body.Error == nil {
		body.Error = &api.Error{Code: api.CodeInternal, Message: fmt.Sprintf("HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(b)))}
	}
	body.Error.Status = resp.StatusCode
	if ra := resp.Header.Get("Retry-After"); ra != "" {
		body.Error.RetryAfterSeconds, _ = strconv.Atoi(ra)
	}
	return body.Error, nil
}

// IsCode reports whether err is a protocol error with code.
func IsCode(err error, code api.Code) bool {
	var e *api.Error
	return errors.As(err, &e) && e.Code == code
}

// Unavailable reports an error that says no coordinator could serve the
// call (down, unreachable, between leaders, over its rate, or its answer
// lost: the outcome is unknown), as opposed to one a coordinator refused.
// A caller that retries on its own terms retries these.
func Unavailable(err error) bool {
	var ue *url.Error
	var ne net.Error
	return errors.As(err, &ue) || errors.As(err, &ne) || errors.Is(err, ErrOutcomeUnknown) || errors.Is(err, ErrNoQuorum) ||
		IsCode(err, api.CodeNoLeader) || IsCode(err, api.CodeNotLeader) || IsCode(err, api.CodeRateLimited)
}
