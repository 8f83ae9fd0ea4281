package httpapi

import (
	"net/http"
	"strings"

	"github.com/gpulayer/gpulayer/coordinator/auth"
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// authenticate resolves the bearer token to a principal. It never echoes the
// token: messages name only what was wrong.
func (s *Server) authenticate(r *http.Request) (auth.Principal, error) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return auth.Principal{}, newError(api.CodeUnauthenticated, "missing Authorization: Bearer token")
	}
	raw, ok := strings.CutPrefix(h, "Bearer ")
	if !ok {
		return auth.Principal{}, newError(api.CodeUnauthenticated, "Authorization must be a Bearer token")
	}
	tok, err := auth.Parse(strings.TrimSpace(raw))
	if err != nil {
		return auth.Principal{}, newError(api.CodeUnauthenticated, "malformed token")
	}
	kind := auth.KindForPrefix(tok.Prefix)
	cred, ok := s.store.Credential(tok.ID)
	if !ok || auth.Kind(cred.Kind) != kind || !auth.Verify(tok.Secret, cred.Hash) {
		return auth.Principal{}, newError(api.CodeUnauthenticated, "unknown or invalid %s token", kind)
	}
	if cred.Expired(s.now()) {
		return auth.Principal{}, newError(api.CodeUnauthenticated, "%s token %s has expired", kind, cred.ID)
	}
	p := auth.Principal{Kind: kind, CredentialID: cred.ID, Name: cred.Name, Roles: cred.Roles, WorkerID: cred.WorkerID}
	if kind == auth.KindWorker {
		w, err := s.store.Worker(cred.WorkerID)
		if err != nil {
			return auth.Principal{}, newError(api.CodeUnauthenticated, "worker credential names no worker")
		}
		if w.Status == api.WorkerRevoked {
			return auth.Principal{}, newError(api.CodeWorkerRevoked, "worker %s is revoked", w.WorkerID)
		}
		if live, _ := s.store.WorkerCredentialID(w.WorkerID); live != cred.ID {
			return auth.Principal{}, newError(api.CodeUnauthenticated, "worker credential was replaced; use the reissued one")
		}
		if w.Status == api.WorkerPending {
			return p, state.ErrWorkerPending
		}
	}
	if cred.Revoked {
		return auth.Principal{}, newError(api.CodeUnauthenticated, "%s token %s was revoked or rotated", kind, cred.ID)
	}
	return p, nil
}

// authorize checks a principal against a route's access rule.
func authorize(p auth.Principal, a Access) error {
	if p.Kind != a.Kind {
		return newError(api.CodeForbidden, "a %s credential may not call this route (it needs a %s credential)", kindName(p.Kind), kindName(a.Kind))
	}
	if a.Kind == auth.KindClient && !p.HasRole(a.Role) {
		return newError(api.CodeForbidden, "client token %q lacks the %s role", p.Name, a.Role)
	}
	return nil
}

func kindName(k auth.Kind) string {
	if k == auth.KindNone {
		return "no"
	}
	return string(k)
}
