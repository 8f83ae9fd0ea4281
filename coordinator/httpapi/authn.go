package httpapi

import (
	"errors"
	"net/http"

	"github.com/gpulayer/gpulayer/coordinator/auth"
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// authenticate asks the authenticator who r acts as (auth.Authenticate
// decides; this is its edge): a refusal becomes the contract's answer,
// with its reason kept for the counters and the audit trail.
func (s *Server) authenticate(r *http.Request) (auth.Principal, error) {
	p, err := s.authn.Authenticate(r.Header.Values("Authorization"), source(r), s.now())
	return p, answerRefusal(err)
}

// authorize checks a principal against a route's access rule.
func authorize(p auth.Principal, a Access) error {
	return answerRefusal(auth.Authorize(p, auth.Rule{Kind: a.Kind, Also: a.Also, Role: a.Role}))
}

// answerRefusal gives an authenticator's refusal the contract's code:
// a revoked worker and a worker outside its networks have codes of their
// own, every other credential refusal is unauthenticated, and a rule that
// refuses a principal is forbidden. Other errors pass as they are.
func answerRefusal(err error) error {
	r, ok := errors.AsType[*auth.Refusal](err)
	if !ok {
		return err
	}
	code := api.CodeUnauthenticated
	switch {
	case r.Reason == auth.ReasonWrongKind || r.Reason == auth.ReasonWrongRole:
		code = api.CodeForbidden
	case r.Reason == auth.ReasonNetwork:
		code = api.CodeEnrollmentRefused
	case errors.Is(r, state.ErrWorkerRevoked):
		code = api.CodeWorkerRevoked
	}
	return refuse(r.Reason, newError(code, "%s", r.Error()))
}
