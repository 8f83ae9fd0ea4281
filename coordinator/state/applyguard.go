package state

import (
	"fmt"

	"github.com/gpulayer/gpulayer/coordinator/command"
)

// A command that meets state contradicting itself (a record naming one
// that is not there) would panic the FSM, and hashicorp/raft does not
// recover: the node stops, and stops again on every replay of the same
// log. Restore refuses such state (snapcodec.Image.Check); refusePanic is the
// net under what it may miss: the command is refused with
// ErrCorruptState instead. What the command changed before it panicked
// stays changed, alike on every replica, which apply the same log.
//
// The checks only this package's tests make (checkOwnership) still
// panic: they find bugs, not bad state.

// ownershipViolation is mustOwn's panic.
type ownershipViolation string

// refusePanic, deferred by applyOne, turns a panic of c's handler into a
// refusal of c in *res.
func refusePanic(c command.Command, res *Result) {
	r := recover()
	if r == nil {
		return
	}
	if v, ok := r.(ownershipViolation); ok {
		panic(v)
	}
	*res = Refused(fmt.Errorf("%w: %T refused: %v", ErrCorruptState, c, r))
}
