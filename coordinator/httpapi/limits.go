package httpapi

import (
	"fmt"
	"math"
	"net/http"
	"net/netip"
	"time"

	"github.com/gpulayer/gpulayer/internal/ratelimit"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// RateLimits configures the abuse limits. A zero rate or burst takes the
// default; a negative rate turns that limit off.
type RateLimits struct {
	// SourceRate limits every request by source address (IPv6 by /64),
	// before it is forwarded or authenticated.
	SourceRate  float64
	SourceBurst int
	// PrincipalRate limits authenticated requests by credential id.
	PrincipalRate  float64
	PrincipalBurst int
	// RegisterRate limits, by source address, the routes that mint a
	// credential for a caller that brings none of ours: POST
	// /v1/workers/register, /v1/workers/enroll and /v1/auth/oidc (the
	// last two take no credential at all).
	RegisterRate  float64
	RegisterBurst int
	// ExecRate limits, by credential, how fast exec sessions are opened
	// (POST /v1/tasks/{id}/exec); loopback is not exempt.
	ExecRate  float64
	ExecBurst int
	// Exempt lists source networks that are never limited. Nil means
	// loopback (local tools, tests, benchmarks); empty means none.
	Exempt []netip.Prefix
}

// Default limits. A worker heartbeats every 2 s and makes a few calls per
// task, so the per-principal rate leaves room for busy workers and
// scripted clients; the per-source rate is high because many agents may
// share one NAT address.
const (
	DefaultSourceRate     = 1000
	DefaultSourceBurst    = 2000
	DefaultPrincipalRate  = 100
	DefaultPrincipalBurst = 400
	DefaultRegisterRate   = 10
	DefaultRegisterBurst  = 50
	DefaultExecRate       = 1
	DefaultExecBurst      = 20
)

func orDefault(v, def float64) float64 {
	if v == 0 {
		return def
	}
	return v
}

func orDefaultInt(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// limiters are the keyed token buckets of one server.
type limiters struct {
	source, principal, register *ratelimit.Keyed
	exempt                      []netip.Prefix
}

func newLimiters(c RateLimits) *limiters {
	l := &limiters{
		source:    ratelimit.New(orDefault(c.SourceRate, DefaultSourceRate), orDefaultInt(c.SourceBurst, DefaultSourceBurst), 0),
		principal: ratelimit.New(orDefault(c.PrincipalRate, DefaultPrincipalRate), orDefaultInt(c.PrincipalBurst, DefaultPrincipalBurst), 0),
		register:  ratelimit.New(orDefault(c.RegisterRate, DefaultRegisterRate), orDefaultInt(c.RegisterBurst, DefaultRegisterBurst), 0),
		exempt:    c.Exempt,
	}
	if l.exempt == nil {
		l.exempt = LoopbackPrefixes
	}
	return l
}

func (l *limiters) exempted(r *http.Request) bool { return inPrefixes(l.exempt, source(r)) }

// rateLimited is the 429 answer, with the wait in Retry-After.
func rateLimited(what string, wait time.Duration) error {
	secs := max(1, int(math.Ceil(wait.Seconds())))
	return &apiError{code: api.CodeRateLimited, msg: fmt.Sprintf("too many requests %s; retry in %d s", what, secs), retryAfter: secs}
}

// limitSource applies the per-source limits; it runs before forwarding.
func (s *Server) limitSource(r *http.Request) error {
	if s.limits.exempted(r) {
		return nil
	}
	now := s.now()
	key := sourceKey(source(r))
	if ok, wait := s.limits.source.Allow(key, now); !ok {
		return rateLimited("from this source address", wait)
	}
	if r.Method == http.MethodPost && mintsCredential(r.URL.Path) {
		if ok, wait := s.limits.register.Allow(key, now); !ok {
			return rateLimited("obtaining credentials from this source address", wait)
		}
	}
	return nil
}

// limitPrincipal applies the per-credential limit; it runs after
// authentication.
func (s *Server) limitPrincipal(r *http.Request, credentialID string) error {
	if credentialID == "" || s.limits.exempted(r) {
		return nil
	}
	if ok, wait := s.limits.principal.Allow(credentialID, s.now()); !ok {
		return rateLimited("with this credential", wait)
	}
	return nil
}

// mintsCredential reports whether a POST to path mints a credential for
// a caller that holds none of ours (RegisterRate applies).
func mintsCredential(path string) bool {
	switch path {
	case "/v1/workers/register", "/v1/workers/enroll", api.PathAuthOIDC:
		return true
	}
	return false
}
