package agent

import (
	"cmp"
	"errors"
	"fmt"
	"math"

	"github.com/gpulayer/gpulayer/agent/runner"
)

// maxTaskUIDSearch bounds the ranges an agent with TaskUIDSearch tries.
const maxTaskUIDSearch = 64

// taskUsers builds the runner's users for slots tasks at once and, for a
// per-slot range, claims its uids on the host; release gives them back.
// With TaskUIDSearch, a range another agent holds or the host uses is
// passed over for the next one (one range width on), up to
// maxTaskUIDSearch ranges; the plan then records the range taken.
func (a *Agent) taskUsers(slots int) (runner.Users, func(), error) {
	if !a.plan.perSlot() {
		users, err := a.plan.users(slots)
		return users, func() {}, err
	}
	lockDir := cmp.Or(a.cfg.TaskUIDLockDir, DefaultTaskUIDLockDir)
	first := a.plan.base
	tries := 1
	if a.cfg.TaskUIDSearch {
		tries = maxTaskUIDSearch
	}
	var lastErr error
	for i := range tries {
		base := uint64(first) + uint64(i)*uint64(slots)
		if base+math.MaxUint16 > math.MaxUint32 {
			break
		}
		plan := a.plan
		plan.base = uint32(base)
		users, err := plan.users(slots)
		if err == nil {
			var release func()
			if release, err = claimTaskUIDs(lockDir, plan.base, slots); err == nil {
				if plan.base != first {
					a.log.Info("task uid range taken instead of the one asked for", "asked", first, "taken", plan.base, "passed_over", lastErr.Error())
				}
				a.plan = plan
				return users, release, nil
			}
		}
		if !errors.Is(err, ErrTaskUIDsTaken) && !errors.Is(err, ErrTaskUIDsInUse) {
			return nil, nil, err
		}
		lastErr = err
	}
	if tries > 1 {
		return nil, nil, fmt.Errorf("agent: no free task uid range in %d ranges from %d (the last: %w)", tries, first, lastErr)
	}
	return nil, nil, lastErr
}

// taskUIDRange is the uids the agent's tasks run as, when not its own.
func (a *Agent) taskUIDRange() (lo, hi uint32, ok bool) {
	switch {
	case a.plan.fixed != nil && a.plan.fixed.Switch:
		return a.plan.fixed.UID, a.plan.fixed.UID, true
	case a.plan.perSlot():
		return a.plan.base, a.plan.base + uint32(a.maxTasks()) - 1, true
	}
	return 0, 0, false
}

// TaskUIDs is the range of uids the agent's tasks run as (one per slot,
// or the one task user), when they do not run as the agent's own user.
// It is known once Ready is closed.
func (a *Agent) TaskUIDs() (lo, hi uint32, ok bool) {
	select {
	case <-a.identified:
		return a.taskUIDRange()
	default:
		return 0, 0, false
	}
}

// Ready is closed once the agent holds its task uids and an accepted
// worker credential, and so is about to take tasks.
func (a *Agent) Ready() <-chan struct{} { return a.identified }
