package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/auth"
	"github.com/gpulayer/gpulayer/coordinator/cluster"
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/sdk/api"
)

func TestErrorMapping(t *testing.T) {
	cases := []struct {
		err    error
		code   api.Code
		status int
	}{
		{state.ErrNotFound, api.CodeNotFound, 404},
		{state.ErrConflict, api.CodeConflict, 409},
		{state.ErrCycleDetected, api.CodeCycleDetected, 409},
		{state.ErrWrongClaimant, api.CodeWrongClaimant, 403},
		{state.ErrNotClaimed, api.CodeNotClaimed, 409},
		{state.ErrStaleAttempt, api.CodeStaleAttempt, 409},
		{state.ErrWorkerNotRegistered, api.CodeWorkerNotRegistered, 403},
		{state.ErrWorkerRevoked, api.CodeWorkerRevoked, 403},
		{state.ErrWorkerPending, api.CodeWorkerPending, 403},
		{state.ErrInvalid, api.CodeInvalidArgument, 400},
		{auth.ErrMalformedToken, api.CodeUnauthenticated, 401},
		{cluster.ErrNotLeader, api.CodeNotLeader, 421},
		{cluster.ErrNoLeader, api.CodeNoLeader, 503},
		{context.DeadlineExceeded, api.CodeNoLeader, 503},
		{newError(api.CodeReservedIdentifier, "x"), api.CodeReservedIdentifier, 400},
		{newError(api.CodeBodyTooLarge, "x"), api.CodeBodyTooLarge, 413},
		{newError(api.CodeRateLimited, "x"), api.CodeRateLimited, 429},
		{errors.New("disk on fire"), api.CodeInternal, 500},
	}
	for _, c := range cases {
		wrapped := fmt.Errorf("task t1: %w", c.err)
		if got := codeFor(wrapped); got != c.code {
			t.Errorf("codeFor(%v) = %s, want %s", c.err, got, c.code)
		}
		if got := c.code.HTTPStatus(); got != c.status {
			t.Errorf("%s.HTTPStatus() = %d, want %d", c.code, got, c.status)
		}
	}
}

func TestEveryCodeHasAStatus(t *testing.T) {
	codes := []api.Code{api.CodeProtocolMismatch, api.CodeInvalidArgument, api.CodeReservedIdentifier, api.CodeUnauthenticated,
		api.CodeForbidden, api.CodeWorkerRevoked, api.CodeWorkerPending, api.CodeEnrollmentRefused, api.CodeWorkerNotRegistered,
		api.CodeWrongClaimant, api.CodeNotFound, api.CodeNotClaimed, api.CodeStaleAttempt, api.CodeConflict, api.CodeCycleDetected,
		api.CodeBodyTooLarge, api.CodeRateLimited, api.CodeNotLeader, api.CodeNoLeader}
	for _, c := range codes {
		if !c.Known() || c.HTTPStatus() == http.StatusInternalServerError {
			t.Errorf("code %s has no status of its own", c)
		}
	}
	if api.Code("made_up").Known() {
		t.Error("unknown code reported as known")
	}
}
