package auth

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/coordinator/state/creds"
)

// Credentials is what authentication reads of the replicated state.
// *state.Store is one.
type Credentials interface {
	Credential(id string) (creds.Credential, bool)
	WorkerAuthInfo(id string) (state.WorkerAuth, bool)
	ContainsSource(clusterKey string, ip netip.Addr) bool
}

// Reason says why a credential was refused: the label of the refusal
// counters and of the audit trail's refusals.
type Reason string

// Refusal reasons.
const (
	ReasonMissing   Reason = "missing"    // no Authorization header
	ReasonMalformed Reason = "malformed"  // not a Bearer token, or no token's shape
	ReasonUnknown   Reason = "unknown"    // no such credential, the wrong secret, or a worker credential naming no worker
	ReasonReplaced  Reason = "replaced"   // a worker credential since reissued
	ReasonRevoked   Reason = "revoked"    // a revoked (or rotated) token, or a revoked worker
	ReasonExpired   Reason = "expired"    // a token past its expiry
	ReasonUsedUp    Reason = "used_up"    // a token with no uses left
	ReasonNetwork   Reason = "network"    // a worker calling from outside its enrollment cluster's networks
	ReasonWrongKind Reason = "wrong_kind" // a credential kind the route does not take
	ReasonWrongRole Reason = "wrong_role" // a client token without the route's role
	ReasonOther     Reason = "other"
)

// Reasons lists every reason, so that each counter series exists from
// the start.
var Reasons = []Reason{
	ReasonMissing, ReasonMalformed, ReasonUnknown, ReasonReplaced, ReasonRevoked,
	ReasonExpired, ReasonUsedUp, ReasonNetwork, ReasonWrongKind, ReasonWrongRole, ReasonOther,
}

// Refusal is a credential refused: why, and a message that names what was
// wrong and never the secret.
type Refusal struct {
	Reason Reason
	msg    string
	err    error // a sentinel it stands for, if any (state.ErrWorkerRevoked)
}

func (r *Refusal) Error() string { return r.msg }
func (r *Refusal) Unwrap() error { return r.err }

func refuse(reason Reason, format string, args ...any) *Refusal {
	return &Refusal{Reason: reason, msg: fmt.Sprintf(format, args...)}
}

// ReasonOf is the reason err carries (other if it is no Refusal).
func ReasonOf(err error) Reason {
	if r, ok := errors.AsType[*Refusal](err); ok {
		return r.Reason
	}
	return ReasonOther
}

// Authenticator decides who a request acts as, from its Authorization
// header and the address it came from.
type Authenticator struct {
	Creds Credentials
	// RequireIPBinding refuses a worker enrolled through a cluster that
	// calls from outside that cluster's networks.
	RequireIPBinding bool
}

// Authenticate resolves the Authorization header's values (all of them,
// as received) to a principal. A refusal is a *Refusal, with the
// principal holding what the token said about itself (kind and ids, never
// the secret) for the log and the audit trail. A pending worker's
// credential yields its principal with state.ErrWorkerPending.
func (a Authenticator) Authenticate(authorization []string, from netip.Addr, now time.Time) (Principal, error) {
	raw, err := bearerToken(authorization)
	if err != nil {
		return Principal{}, err
	}
	tok, err := Parse(raw)
	if err != nil {
		return Principal{}, refuse(ReasonMalformed, "malformed token")
	}
	kind := KindForPrefix(tok.Prefix)
	seen := Principal{Kind: kind, CredentialID: tok.ID}
	cred, ok := a.Creds.Credential(tok.ID)
	if !ok || Kind(cred.Kind) != kind || !Verify(tok.Secret, cred.Hash) {
		return seen, refuse(ReasonUnknown, "unknown or invalid %s token", kind)
	}
	p := Principal{Kind: kind, CredentialID: cred.ID, Name: cred.Name, Roles: cred.Roles, WorkerID: cred.WorkerID, InstanceID: cred.InstanceID}
	if kind == KindClient {
		p.Team = command.TeamOf(cred.Team)
	}
	if kind == KindWorker {
		w, ok := a.Creds.WorkerAuthInfo(cred.WorkerID)
		if !ok {
			return seen, refuse(ReasonUnknown, "worker credential names no worker")
		}
		seen.WorkerID = w.ID
		switch {
		case w.Status == state.WorkerRevoked:
			r := refuse(ReasonRevoked, "worker %s is revoked", w.ID)
			r.err = state.ErrWorkerRevoked
			return seen, r
		case w.CredentialID != cred.ID:
			return seen, refuse(ReasonReplaced, "worker credential was replaced; use the reissued one")
		case a.RequireIPBinding && w.ClusterKey != "" && !a.Creds.ContainsSource(w.ClusterKey, from):
			return seen, refuse(ReasonNetwork, "worker %s enrolled through cluster %s and must call from inside its networks; this request comes from %s", w.ID, w.ClusterKey, addrString(from))
		case w.Status == state.WorkerPending:
			return p, state.ErrWorkerPending
		}
	}
	if err := cred.Check(now); err != nil {
		return seen, refuse(unusable(cred, now), "%v", err)
	}
	return p, nil
}

// bearerToken reads the one Authorization header's token. The scheme is
// matched without regard to case (RFC 9110, section 11.1: "bearer" and
// "BEARER" are "Bearer"), and one or more spaces may follow it. Two
// Authorization headers are refused: which one a proxy in front reads is
// not known, so neither is trusted.
func bearerToken(values []string) (string, error) {
	switch {
	case len(values) == 0 || len(values) == 1 && values[0] == "":
		return "", refuse(ReasonMissing, "missing Authorization: Bearer token")
	case len(values) > 1:
		return "", refuse(ReasonMalformed, "Authorization is given %d times; send one Bearer token", len(values))
	}
	scheme, rest, _ := strings.Cut(values[0], " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return "", refuse(ReasonMalformed, "Authorization must be a Bearer token")
	}
	return strings.TrimSpace(rest), nil
}

// unusable is the reason a credential that Check refused is unusable.
func unusable(cred creds.Credential, now time.Time) Reason {
	switch {
	case cred.Revoked:
		return ReasonRevoked
	case cred.Expired(now):
		return ReasonExpired
	case cred.UsedUp():
		return ReasonUsedUp
	}
	return ReasonOther
}

func addrString(a netip.Addr) string {
	if a.IsValid() {
		return a.String()
	}
	return ""
}

// Rule is what a route asks of a credential: its kind (or Also), and for
// a client token the role.
type Rule struct {
	Kind Kind
	Also Kind
	Role string
}

// Authorize checks a principal against a route's rule.
func Authorize(p Principal, rule Rule) error {
	if p.Kind != rule.Kind && (rule.Also == KindNone || p.Kind != rule.Also) {
		return refuse(ReasonWrongKind, "a %s credential may not call this route (it needs %s)", kindName(p.Kind), rule)
	}
	if p.Kind == KindClient && !p.HasRole(rule.Role) {
		return refuse(ReasonWrongRole, "client token %q lacks the %s role", p.Name, rule.Role)
	}
	return nil
}

// String names the credentials the rule takes.
func (r Rule) String() string {
	s := "a " + string(r.Kind) + " credential"
	if r.Also != KindNone {
		s += " or a " + string(r.Also) + " credential"
	}
	return s
}

func kindName(k Kind) string {
	if k == KindNone {
		return "no"
	}
	return string(k)
}
