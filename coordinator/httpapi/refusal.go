package httpapi

import "errors"

// refusalKind says why a credential was refused, as the label of
// gpulayer_auth_refused_total. The set is fixed: a label never holds
// anything the caller sent.
type refusalKind string

const (
	refusedMissing   refusalKind = "missing"    // no Authorization header
	refusedMalformed refusalKind = "malformed"  // not a Bearer token, or no token's shape
	refusedUnknown   refusalKind = "unknown"    // no such credential, the wrong secret, or a worker credential naming no worker
	refusedReplaced  refusalKind = "replaced"   // a worker credential since reissued
	refusedRevoked   refusalKind = "revoked"    // a revoked (or rotated) token, or a revoked worker
	refusedExpired   refusalKind = "expired"    // a token past its expiry
	refusedUsedUp    refusalKind = "used_up"    // a token with no uses left
	refusedNetwork   refusalKind = "network"    // a worker calling from outside its enrollment cluster's networks
	refusedWrongKind refusalKind = "wrong_kind" // a credential kind the route does not take
	refusedWrongRole refusalKind = "wrong_role" // a client token without the route's role
	refusedOther     refusalKind = "other"
)

// refusalKinds lists every kind, so each series exists from the start.
var refusalKinds = []refusalKind{
	refusedMissing, refusedMalformed, refusedUnknown, refusedReplaced, refusedRevoked,
	refusedExpired, refusedUsedUp, refusedNetwork, refusedWrongKind, refusedWrongRole, refusedOther,
}

// refusal is an authentication or authorisation error with its kind. It
// unwraps to the error it carries, so codeFor and the answer are those of
// that error.
type refusal struct {
	kind refusalKind
	err  error
}

func (r *refusal) Error() string { return r.err.Error() }
func (r *refusal) Unwrap() error { return r.err }

func refuse(kind refusalKind, err error) error { return &refusal{kind: kind, err: err} }

// kindOf is the refusal kind err carries (other if none).
func kindOf(err error) refusalKind {
	var r *refusal
	if errors.As(err, &r) {
		return r.kind
	}
	return refusedOther
}
