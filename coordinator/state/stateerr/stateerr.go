// Package stateerr holds the state machine's sentinel errors, so that the
// state's rooms (groups, identity, ...) refuse a command with the same
// errors the state answers with: package state re-exports each one, the
// very same value, and errors.Is matches across them. It imports nothing.
package stateerr

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
	// ErrForbidden refuses a valid credential used where it may not be
	// (an instance token for another instance).
	ErrForbidden = errors.New("credential not allowed here")
	// ErrCredentialUnusable refuses a token that is revoked, expired or
	// used up; the HTTP layer answers 401 as for any invalid token.
	ErrCredentialUnusable = errors.New("credential is revoked, expired or used up")
	// ErrEnrollmentRefused refuses an enrollment whose cluster, allowlist
	// row or source address does not match.
	ErrEnrollmentRefused = errors.New("enrollment refused")
	// ErrCorruptState refuses a command that met state contradicting
	// itself (applyguard.go): the command is refused instead of the FSM
	// panicking on every replay.
	ErrCorruptState = errors.New("state contradicts itself")
)
