package state

import "errors"

// Sentinel errors returned (wrapped) as command results and by reads.
var (
	ErrNotFound            = errors.New("not found")
	ErrConflict            = errors.New("conflict")
	ErrWrongClaimant       = errors.New("task is held by another worker")
	ErrNotClaimed          = errors.New("task is not assigned")
	ErrStaleAttempt        = errors.New("attempt is not the task's current one")
	ErrWorkerNotRegistered = errors.New("worker is not registered")
	ErrWorkerRevoked       = errors.New("worker is revoked")
	ErrWorkerPending       = errors.New("worker awaits approval")
	ErrInvalid             = errors.New("invalid command")
	ErrCycleDetected       = errors.New("group membership would form a cycle")
)
