package state

import "github.com/gpulayer/gpulayer/coordinator/state/stateerr"

// Sentinel errors returned (wrapped) as command results and by reads:
// package stateerr's, the same values, which the state's rooms return
// (that package documents each).
var (
	ErrNotFound            = stateerr.ErrNotFound
	ErrConflict            = stateerr.ErrConflict
	ErrWrongClaimant       = stateerr.ErrWrongClaimant
	ErrNotClaimed          = stateerr.ErrNotClaimed
	ErrStaleAttempt        = stateerr.ErrStaleAttempt
	ErrWorkerNotRegistered = stateerr.ErrWorkerNotRegistered
	ErrWorkerRevoked       = stateerr.ErrWorkerRevoked
	ErrWorkerPending       = stateerr.ErrWorkerPending
	ErrInvalid             = stateerr.ErrInvalid
	ErrCycleDetected       = stateerr.ErrCycleDetected
	ErrForbidden           = stateerr.ErrForbidden
	ErrCredentialUnusable  = stateerr.ErrCredentialUnusable
	ErrEnrollmentRefused   = stateerr.ErrEnrollmentRefused
	ErrCorruptState        = stateerr.ErrCorruptState
)
