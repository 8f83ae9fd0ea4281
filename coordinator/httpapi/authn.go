package httpapi

import (
	"net/http"
	"strings"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/auth"
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// authenticate resolves the bearer token to a principal. It never echoes the
// token: messages name only what was wrong. On failure the principal holds
// what the token said about itself (kind and id, never the secret), for the
// log and the audit trail.
func (s *Server) authenticate(r *http.Request) (auth.Principal, error) {
	raw, err := bearerToken(r.Header)
	if err != nil {
		return auth.Principal{}, err
	}
	tok, err := auth.Parse(raw)
	if err != nil {
		return auth.Principal{}, refuse(refusedMalformed, newError(api.CodeUnauthenticated, "malformed token"))
	}
	kind := auth.KindForPrefix(tok.Prefix)
	seen := auth.Principal{Kind: kind, CredentialID: tok.ID}
	cred, ok := s.store.Credential(tok.ID)
	if !ok || auth.Kind(cred.Kind) != kind || !auth.Verify(tok.Secret, cred.Hash) {
		return seen, refuse(refusedUnknown, newError(api.CodeUnauthenticated, "unknown or invalid %s token", kind))
	}
	p := auth.Principal{Kind: kind, CredentialID: cred.ID, Name: cred.Name, Roles: cred.Roles, WorkerID: cred.WorkerID, InstanceID: cred.InstanceID}
	if kind == auth.KindWorker {
		w, ok := s.store.WorkerAuthInfo(cred.WorkerID)
		if !ok {
			return seen, refuse(refusedUnknown, newError(api.CodeUnauthenticated, "worker credential names no worker"))
		}
		seen.WorkerID = w.ID
		if w.Status == api.WorkerRevoked {
			return seen, refuse(refusedRevoked, newError(api.CodeWorkerRevoked, "worker %s is revoked", w.ID))
		}
		if w.CredentialID != cred.ID {
			return seen, refuse(refusedReplaced, newError(api.CodeUnauthenticated, "worker credential was replaced; use the reissued one"))
		}
		if s.requireIPBinding && w.ClusterKey != "" && !s.store.ContainsSource(w.ClusterKey, source(r)) {
			return seen, refuse(refusedNetwork, newError(api.CodeEnrollmentRefused, "worker %s enrolled through cluster %s and must call from inside its networks; this request comes from %s", w.ID, w.ClusterKey, sourceString(r)))
		}
		if w.Status == api.WorkerPending {
			return p, state.ErrWorkerPending
		}
	}
	if err := cred.Check(s.now()); err != nil {
		return seen, refuse(unusableKind(cred, s.now()), newError(api.CodeUnauthenticated, "%v", err))
	}
	return p, nil
}

// bearerToken reads the one Authorization header's token. The scheme is
// matched without regard to case (RFC 9110, section 11.1: "bearer" and
// "BEARER" are "Bearer"), and one or more spaces may follow it. Two
// Authorization headers are refused: which one a proxy in front reads is
// not known, so neither is trusted.
func bearerToken(h http.Header) (string, error) {
	values := h.Values("Authorization")
	switch {
	case len(values) == 0 || len(values) == 1 && values[0] == "":
		return "", refuse(refusedMissing, newError(api.CodeUnauthenticated, "missing Authorization: Bearer token"))
	case len(values) > 1:
		return "", refuse(refusedMalformed, newError(api.CodeUnauthenticated, "Authorization is given %d times; send one Bearer token", len(values)))
	}
	scheme, rest, _ := strings.Cut(values[0], " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return "", refuse(refusedMalformed, newError(api.CodeUnauthenticated, "Authorization must be a Bearer token"))
	}
	return strings.TrimSpace(rest), nil
}

// authorize checks a principal against a route's access rule.
func authorize(p auth.Principal, a Access) error {
	if p.Kind != a.Kind && (a.Also == auth.KindNone || p.Kind != a.Also) {
		return refuse(refusedWrongKind, newError(api.CodeForbidden, "a %s credential may not call this route (it needs %s)", kindName(p.Kind), accessName(a)))
	}
	if p.Kind == auth.KindClient && !p.HasRole(a.Role) {
		return refuse(refusedWrongRole, newError(api.CodeForbidden, "client token %q lacks the %s role", p.Name, a.Role))
	}
	return nil
}

func kindName(k auth.Kind) string {
	if k == auth.KindNone {
		return "no"
	}
	return string(k)
}

func accessName(a Access) string {
	s := "a " + string(a.Kind) + " credential"
	if a.Also != auth.KindNone {
		s += " or a " + string(a.Also) + " credential"
	}
	return s
}

// unusableKind is the refusal kind of a credential that Check refused.
func unusableKind(cred state.Credential, now time.Time) refusalKind {
	switch {
	case cred.Revoked:
		return refusedRevoked
	case cred.Expired(now):
		return refusedExpired
	case cred.UsedUp():
		return refusedUsedUp
	}
	return refusedOther
}
