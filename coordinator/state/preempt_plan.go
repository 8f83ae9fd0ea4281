package state

import (
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/sched/preemption"
)

// PlanPreemption decides, on the leader, one preemption the policy
// (package preemption) allows at now, for the first of the pending
// tasks that may preempt (preemption.Candidates) that needs one and for
// which one would do. It reads the replicated state only; the command
// it returns is checked again where it applies. false: none is due. A
// plan with no For only sweeps holds that have expired.
func (s *Store) PlanPreemption(now time.Time, o preemption.Options) (command.PreemptTasks, bool) {
	o = o.WithDefaults()
	s.mu.RLock()
	defer s.mu.RUnlock()
	v := s.planView()
	if c, ok := preemption.Plan(v, preemption.Candidates(v, now, o.MaxCandidates), now, o); ok {
		return c, true
	}
	if preemption.HoldsExpired(v, now) {
		return command.PreemptTasks{MinRuntime: o.MinRuntime, Now: now}, true
	}
	return command.PreemptTasks{}, false
}
