package state

import (
	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/pending"
)

// keyOf is the sub-queue a job's pending tasks wait in (package
// pending): its executor, target, capability and team, and what each
// task asks for, so that a match reads only the sub-queues a worker
// could take from, in fair-share order (place.ByShare), and passes over
// the GPU sub-queues of a team with no room left (teamroom.go).
func keyOf(j *Job) pending.Key {
	spec := j.Spec
	k := pending.Key{Executor: spec.Executor, Target: pending.TargetKey(spec.Target), Capability: spec.Capability, Team: command.TeamOf(j.Team), Res: spec.Asked()}
	if r := spec.Resources; r != nil && r.GPUs > 0 {
		k.Partial = r.Partial()
		if !k.Partial {
			k.Size = r.GPUs
		}
	}
	return k
}
