package httpapi

import (
	"context"
	"errors"
	"fmt"

	"github.com/gpulayer/gpulayer/coordinator/auth"
	"github.com/gpulayer/gpulayer/coordinator/cluster"
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// Errors raised by the HTTP layer itself.
var (
	errBodyTooLarge = errors.New("request body too large")
	errNotLeader    = cluster.ErrNotLeader
	errNoLeader     = cluster.ErrNoLeader
)

// apiError is an error that already carries its protocol code.
type apiError struct {
	code api.Code
	msg  string
	// retryAfter is the Retry-After of a rate_limited answer, in seconds.
	retryAfter int
}

func (e *apiError) Error() string { return e.msg }

func newError(code api.Code, format string, args ...any) error {
	return &apiError{code: code, msg: fmt.Sprintf(format, args...)}
}

func invalidf(format string, args ...any) error {
	return newError(api.CodeInvalidArgument, format, args...)
}

// codeFor maps an error to its protocol code. It is the one place where
// internal errors meet the wire.
func codeFor(err error) api.Code {
	var ae *apiError
	switch {
	case errors.As(err, &ae):
		return ae.code
	case errors.Is(err, state.ErrInvalid):
		return api.CodeInvalidArgument
	case errors.Is(err, auth.ErrMalformedToken):
		return api.CodeUnauthenticated
	case errors.Is(err, state.ErrCredentialUnusable):
		return api.CodeUnauthenticated
	case errors.Is(err, state.ErrForbidden):
		return api.CodeForbidden
	case errors.Is(err, state.ErrEnrollmentRefused):
		return api.CodeEnrollmentRefused
	case errors.Is(err, state.ErrWorkerRevoked):
		return api.CodeWorkerRevoked
	case errors.Is(err, state.ErrWorkerPending):
		return api.CodeWorkerPending
	case errors.Is(err, state.ErrWorkerNotRegistered):
		return api.CodeWorkerNotRegistered
	case errors.Is(err, state.ErrWrongClaimant):
		return api.CodeWrongClaimant
	case errors.Is(err, state.ErrNotFound):
		return api.CodeNotFound
	case errors.Is(err, state.ErrNotClaimed):
		return api.CodeNotClaimed
	case errors.Is(err, state.ErrStaleAttempt):
		return api.CodeStaleAttempt
	case errors.Is(err, state.ErrCycleDetected):
		return api.CodeCycleDetected
	case errors.Is(err, state.ErrConflict):
		return api.CodeConflict
	case errors.Is(err, errBodyTooLarge):
		return api.CodeBodyTooLarge
	case errors.Is(err, errNoLeader):
		return api.CodeNoLeader
	case errors.Is(err, errNotLeader):
		return api.CodeNotLeader
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return api.CodeNoLeader
	}
	return api.CodeInternal
}
