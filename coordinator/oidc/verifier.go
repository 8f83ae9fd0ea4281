package oidc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	gooidc "github.com/coreos/go-oidc/v3/oidc"
)

// MaxIDTokenBytes bounds an ID token presented for exchange.
const MaxIDTokenBytes = 16 << 10

// Reason says why an ID token was refused.
type Reason string

// Refusal reasons. Invalid covers every verification failure (the
// caller answers them all alike, so that a prober learns nothing of which
// check failed); Unmapped is a verified subject with no mapping.
const (
	ReasonInvalid  Reason = "invalid"
	ReasonUnmapped Reason = "unmapped"
)

// Refusal is an ID token refused. Its message never holds the token;
// Detail (for the operator's log) says which check failed.
type Refusal struct {
	Reason Reason
	Detail string
}

func (r *Refusal) Error() string { return "oidc: " + string(r.Reason) + ": " + r.Detail }

// ReasonOf is the reason err carries (Invalid if it is no Refusal).
func ReasonOf(err error) Reason {
	if r, ok := errors.AsType[*Refusal](err); ok {
		return r.Reason
	}
	return ReasonInvalid
}

// errDiscoveryBackoff: discovery failed moments ago and is not tried yet.
var errDiscoveryBackoff = errors.New("oidc: discovery failed moments ago; not retried yet")

// Identity is a verified, mapped subject.
type Identity struct {
	Issuer  string
	Subject string
	Grant
	// Expires is when the client token minted for it must end: the ID
	// token's expiry, and no later than MaxSession from now.
	Expires time.Time
}

// Verifier checks ID tokens against one issuer and maps them.
type Verifier struct {
	cfg    Config
	client *http.Client
	now    func() time.Time
	log    *slog.Logger

	// ctx lives as long as the verifier: go-oidc's remote key set uses
	// it for every refetch of the keys.
	ctx context.Context

	mu       sync.Mutex
	verifier *gooidc.IDTokenVerifier
	failedAt time.Time // the last failed discovery
}

// discoveryRetry is how long a failed discovery is remembered: meanwhile
// exchanges are refused at once instead of each waiting on the provider.
const discoveryRetry = 5 * time.Second

// Options tune a Verifier; zero values take the defaults.
type Options struct {
	// HTTPClient fetches discovery and keys (default: 10 s timeout).
	HTTPClient *http.Client
	Now        func() time.Time
	Logger     *slog.Logger
}

// New returns a verifier for a validated, enabled configuration. The
// discovery document is fetched on first use (and again on each use
// until it succeeds), so a coordinator starts while its provider is down.
func New(ctx context.Context, cfg Config, o Options) (*Verifier, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if !cfg.Enabled() {
		return nil, configErr("single sign-on is not configured")
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Verifier{
		cfg: cfg, client: o.HTTPClient, now: o.Now, log: o.Logger,
		ctx: gooidc.ClientContext(context.WithoutCancel(ctx), o.HTTPClient),
	}, nil
}

// Issuer is the configured issuer.
func (v *Verifier) Issuer() string { return v.cfg.Issuer }

// idVerifier discovers the provider once and keeps its verifier.
func (v *Verifier) idVerifier(ctx context.Context) (*gooidc.IDTokenVerifier, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.verifier != nil {
		return v.verifier, nil
	}
	if !v.failedAt.IsZero() && v.now().Sub(v.failedAt) < discoveryRetry {
		return nil, errDiscoveryBackoff
	}
	dctx, cancel := context.WithTimeout(gooidc.ClientContext(ctx, v.client), 10*time.Second)
	defer cancel()
	p, err := gooidc.NewProvider(dctx, v.cfg.Issuer)
	if err != nil {
		v.failedAt = v.now()
		return nil, err
	}
	v.verifier = p.VerifierContext(v.ctx, &gooidc.Config{
		ClientID:             v.cfg.Audience,
		SupportedSigningAlgs: []string{gooidc.RS256, gooidc.ES256},
		Now:                  v.now,
	})
	return v.verifier, nil
}

// Verify checks raw and maps its subject. A refusal is a *Refusal.
func (v *Verifier) Verify(ctx context.Context, raw string) (Identity, error) {
	if raw == "" || len(raw) > MaxIDTokenBytes {
		return Identity{}, &Refusal{Reason: ReasonInvalid, Detail: fmt.Sprintf("the ID token must be 1 to %d bytes", MaxIDTokenBytes)}
	}
	idv, err := v.idVerifier(ctx)
	if err != nil {
		if !errors.Is(err, errDiscoveryBackoff) {
			v.log.Warn("oidc discovery failed", "issuer", v.cfg.Issuer, "err", err)
		}
		return Identity{}, &Refusal{Reason: ReasonInvalid, Detail: "the issuer's discovery document could not be read"}
	}
	tok, err := idv.Verify(ctx, raw)
	if err != nil {
		return Identity{}, &Refusal{Reason: ReasonInvalid, Detail: classify(err)}
	}
	var claims map[string]any
	if err := tok.Claims(&claims); err != nil {
		return Identity{}, &Refusal{Reason: ReasonInvalid, Detail: "the claims are not a JSON object"}
	}
	if !validSubject(tok.Subject) {
		return Identity{}, &Refusal{Reason: ReasonInvalid, Detail: "the subject is empty, longer than 255 bytes or not printable"}
	}
	g, ok := Map(v.cfg.Mappings, claimValues(claims[v.cfg.Claim]))
	id := Identity{Issuer: tok.Issuer, Subject: tok.Subject, Grant: g}
	if !ok {
		return id, &Refusal{Reason: ReasonUnmapped, Detail: "claim " + v.cfg.Claim + " maps to no team"}
	}
	id.Expires = tok.Expiry
	if limit := v.now().Add(MaxSession); id.Expires.IsZero() || id.Expires.After(limit) {
		id.Expires = limit
	}
	return id, nil
}

// classify names which check refused a token, from go-oidc's error,
// without repeating the error (which may quote claims).
func classify(err error) string {
	var expired *gooidc.TokenExpiredError
	if errors.As(err, &expired) {
		return "expired"
	}
	msg := err.Error()
	for _, c := range []struct{ has, say string }{
		{"audience", "wrong audience"},
		{"issued by a different provider", "wrong issuer"},
		{"signing algorithm", "signing algorithm not accepted"},
		{"verify signature", "signature not verified"},
		{"malformed", "malformed"},
	} {
		if strings.Contains(msg, c.has) {
			return c.say
		}
	}
	return "not verified"
}

// validSubject bounds a subject to what OpenID Connect allows (at most
// 255 ASCII characters), printable, since it reaches logs and the audit.
func validSubject(sub string) bool {
	if sub == "" || len(sub) > 255 {
		return false
	}
	for i := 0; i < len(sub); i++ {
		if sub[i] < 0x20 || sub[i] > 0x7e {
			return false
		}
	}
	return true
}
