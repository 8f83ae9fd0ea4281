package state

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/sched/preemption"
)

// PreemptOutcome is the outcome of PreemptTasks: the tasks stopped, and
// how many of them, assigned but not started, went back to the queue at
// once (the others end when their agents stop them).
type PreemptOutcome struct {
	Victims  []string
	Requeued int
}

// preemptedByJob starts the reason a preemption for another task gives
// its victims (a drain's or a stop's names the worker).
const preemptedByJob = "preempted by job "

// preemptedForTask reports whether t's attempt was asked to stop by a
// preemption for another task, not by a drain or a stop.
func preemptedForTask(t *Task) bool { return strings.HasPrefix(t.Preempt, preemptedByJob) }

// preemptTasks applies a preemption the leader decided (PlanPreemption),
// after checking it again against the state it applies to: the task it
// is for still waits and could not be placed as things are, every victim
// still runs the attempt named and may be preempted for it (a gang's
// with every running member named), and the task (a gang: every member)
// fits once they are gone. A check that fails refuses the whole command
// and changes nothing. Each victim's attempt is told to stop with a
// reason naming the preempting job and team; the devices they hold are
// held for the task until c.HoldUntil (preempt_holds.go).
func (s *Store) preemptTasks(c command.PreemptTasks) (PreemptOutcome, error) {
	if c.For == "" {
		if len(c.Victims) > 0 {
			return PreemptOutcome{}, fmt.Errorf("%w: victims with no task to preempt for", ErrInvalid)
		}
		s.sweepHolds(c.Now)
		return PreemptOutcome{}, nil
	}
	chk, err := preemption.Check(s.planView(), c)
	if err != nil {
		return PreemptOutcome{}, err
	}
	p, pj, victims := chk.For, chk.Job, chk.Victims
	s.sweepHolds(c.Now)
	pTeam := command.TeamOf(pj.Team)
	reason := fmt.Sprintf("%s%s (team %s) for its task %s", preemptedByJob, pj.ID, pTeam, p.ID)
	holds := map[string][]DeviceHold{}
	out := PreemptOutcome{}
	for _, v := range victims {
		vj := s.jobs.Get(v.JobID)
		vw := s.workers[v.WorkerID]
		if _, ok := holds[vw.ID]; !ok {
			holds[vw.ID] = slices.Clone(vw.Holds)
		}
		for _, d := range v.Devices {
			holds[vw.ID] = append(holds[vw.ID], DeviceHold{Device: d, TaskID: p.ID, Until: c.HoldUntil})
		}
		v = s.ownTask(v)
		v.OwnCurrent().PreemptedBy = &Preemptor{JobID: pj.ID, Team: pTeam, TaskID: p.ID, At: c.Now}
		if s.preemptTask(v, reason, c.Now) {
			out.Requeued++
		}
		out.Victims = append(out.Victims, v.ID)
		s.audit.Record(command.AuditEvent{Time: c.Now, Kind: "task.preempted", WorkerID: vw.ID, Subject: v.ID, Team: command.TeamOf(vj.Team),
			Detail: fmt.Sprintf("job %s task %s (team %s, priority %d) %s (priority %d); grace %ds",
				vj.ID, v.ID, command.TeamOf(vj.Team), vj.Spec.Priority, reason, pj.Spec.Priority, vj.Spec.PreemptionGrace())})
	}
	for id, hs := range holds {
		s.workers[id].Holds = hs
	}
	s.markPending()
	return out, nil
}
