package api

import (
	"fmt"
	"net/http"
	"slices"
)

// Code is a machine-readable error code from the protocol's error table.
type Code string

// Error codes, one per row of the protocol's error table.
const (
	CodeProtocolMismatch    Code = "protocol_mismatch"
	CodeInvalidArgument     Code = "invalid_argument"
	CodeReservedIdentifier  Code = "reserved_identifier"
	CodeUnauthenticated     Code = "unauthenticated"
	CodeForbidden           Code = "forbidden"
	CodeWorkerRevoked       Code = "worker_revoked"
	CodeWorkerPending       Code = "worker_pending"
	CodeEnrollmentRefused   Code = "enrollment_refused"
	CodeWorkerNotRegistered Code = "worker_not_registered"
	CodeWrongClaimant       Code = "wrong_claimant"
	CodeNotFound            Code = "not_found"
	CodeNotClaimed          Code = "not_claimed"
	CodeStaleAttempt        Code = "stale_attempt"
	CodeConflict            Code = "conflict"
	CodeCycleDetected       Code = "cycle_detected"
	CodeBodyTooLarge        Code = "body_too_large"
	CodeRateLimited         Code = "rate_limited"
	CodeNotLeader           Code = "not_leader"
	CodeNoLeader            Code = "no_leader"
	CodeInternal            Code = "internal"
)

var codeStatus = map[Code]int{
	CodeProtocolMismatch:    http.StatusBadRequest,
	CodeInvalidArgument:     http.StatusBadRequest,
	CodeReservedIdentifier:  http.StatusBadRequest,
	CodeUnauthenticated:     http.StatusUnauthorized,
	CodeForbidden:           http.StatusForbidden,
	CodeWorkerRevoked:       http.StatusForbidden,
	CodeWorkerPending:       http.StatusForbidden,
	CodeEnrollmentRefused:   http.StatusForbidden,
	CodeWorkerNotRegistered: http.StatusForbidden,
	CodeWrongClaimant:       http.StatusForbidden,
	CodeNotFound:            http.StatusNotFound,
	CodeNotClaimed:          http.StatusConflict,
	CodeStaleAttempt:        http.StatusConflict,
	CodeConflict:            http.StatusConflict,
	CodeCycleDetected:       http.StatusConflict,
	CodeBodyTooLarge:        http.StatusRequestEntityTooLarge,
	CodeRateLimited:         http.StatusTooManyRequests,
	CodeNotLeader:           http.StatusMisdirectedRequest,
	CodeNoLeader:            http.StatusServiceUnavailable,
	CodeInternal:            http.StatusInternalServerError,
}

// HTTPStatus is the status code that goes with c; unknown codes map to 500.
func (c Code) HTTPStatus() int {
	if s, ok := codeStatus[c]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// Codes lists the protocol's error codes, sorted.
func Codes() []Code {
	out := make([]Code, 0, len(codeStatus))
	for c := range codeStatus {
		out = append(out, c)
	}
	slices.Sort(out)
	return out
}

// Known reports whether c is one of the protocol's codes.
func (c Code) Known() bool {
	_, ok := codeStatus[c]
	return ok
}

// Error is the body of every non-2xx answer, under the "error" key.
type Error struct {
	Code      Code   `json:"code"`
	Message   string `json:"message"`
	RequestID string `json:"request_id,omitempty"`
	// Leader is the leader's HTTP address, set with CodeNotLeader.
	Leader string `json:"leader,omitempty"`
	// Status is the HTTP status the error arrived with (client side only).
	Status int `json:"-"`
	// RetryAfterSeconds is the Retry-After header (client side only).
	RetryAfterSeconds int `json:"-"`
}

// Error implements the error interface.
func (e *Error) Error() string {
	if e.Message == "" {
		return string(e.Code)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// ErrorBody is the JSON envelope of an error answer.
type ErrorBody struct {
	Error *Error `json:"error"`
}
