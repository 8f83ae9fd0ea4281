package execsession

import "errors"

// Sentinel errors.
var (
	// ErrUnknown: no such session for this caller (never opened, expired,
	// ended, already attached, or another caller's: the same answer).
	ErrUnknown = errors.New("execsession: unknown session")
	// ErrTooManyForTask and ErrTooManyForClient: a bound on open sessions.
	ErrTooManyForTask   = errors.New("execsession: too many exec sessions open on this task")
	ErrTooManyForClient = errors.New("execsession: too many exec sessions open by this client")
	// ErrExpired: the other end did not attach in time.
	ErrExpired = errors.New("execsession: the session expired before both ends attached")
	// ErrBadFrame: a frame of a type or size its sender may not send.
	ErrBadFrame = errors.New("execsession: bad frame")
)
