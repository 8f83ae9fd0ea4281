package state

import (
	"context"
	"errors"
	"fmt"

	"github.com/gpulayer/gpulayer/coordinator/command"
)

// ErrOutcomeType reports a command whose outcome is not of the type its
// proposer asked for: a programming error, never a refusal.
var ErrOutcomeType = errors.New("state: outcome of another type")

// Result is what applying one command yields: its outcome, or the refusal
// that left the state unchanged. It crosses raft's FSM boundary, where
// values are untyped; read it with Propose or OutcomeOf, the one place its
// type is checked.
type Result struct {
	value any
	err   error
}

// Err is the command's refusal (wrapping one of the sentinels), or nil.
func (r Result) Err() error { return r.err }

// Refused is the Result of a command refused with err.
func Refused(err error) Result { return Result{err: err} }

// OutcomeOf returns r's outcome as an O, or its refusal. An outcome of
// another type is ErrOutcomeType.
func OutcomeOf[O any](r Result) (O, error) {
	var zero O
	if r.err != nil {
		return zero, r.err
	}
	o, ok := r.value.(O)
	if !ok {
		return zero, fmt.Errorf("%w: %T, not %T", ErrOutcomeType, r.value, zero)
	}
	return o, nil
}

// Proposer proposes a command through Raft and returns what applying it
// yielded; the error is the proposal's own (no leader, shut down, outcome
// unknown), a refusal is the Result's.
type Proposer func(ctx context.Context, c command.Command) (Result, error)

// Propose proposes c and returns its outcome as an O: the proposal's error
// or the command's refusal, else the outcome (see handlers.go for the
// outcome type of each command).
func Propose[O any](ctx context.Context, p Proposer, c command.Command) (O, error) {
	r, err := p(ctx, c)
	if err != nil {
		var zero O
		return zero, err
	}
	return OutcomeOf[O](r)
}
