package state

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/sched/place"
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
	p, pj, w, err := s.checkPreemptor(c)
	if err != nil {
		return PreemptOutcome{}, err
	}
	victims, err := s.checkVictims(c, p, pj, w)
	if err != nil {
		return PreemptOutcome{}, err
	}
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

// checkPreemptor checks the task a preemption is for: pending in the
// queue, asking for GPUs, and placeable nowhere as things are (a gang
// member: its gang, every member pending and waiting for no dependency,
// cannot be placed whole); and the worker, which must be able to run it
// (a gang's is where its first victim runs).
func (s *Store) checkPreemptor(c command.PreemptTasks) (*Task, *Job, *Worker, error) {
	p, ok := s.tasks.Lookup(c.For)
	if !ok {
		return nil, nil, nil, fmt.Errorf("task %s: %w", c.For, ErrNotFound)
	}
	pj := s.jobs.Get(p.JobID)
	switch {
	case p.State != taskPending:
		return nil, nil, nil, fmt.Errorf("task %s is %s: %w", p.ID, p.State, ErrConflict)
	case pj.Spec.Resources == nil || pj.Spec.Resources.GPUs == 0:
		return nil, nil, nil, fmt.Errorf("%w: task %s asks for no GPUs", ErrInvalid, p.ID)
	case len(c.Victims) == 0:
		return nil, nil, nil, fmt.Errorf("%w: a preemption names no victim", ErrInvalid)
	}
	w, ok := s.workers[c.WorkerID]
	if !ok {
		return nil, nil, nil, fmt.Errorf("worker %s: %w", c.WorkerID, ErrNotFound)
	}
	if pj.Spec.Gang {
		ts, ok := s.gangTasks(pj)
		if !ok {
			return nil, nil, nil, fmt.Errorf("job %s: not every gang member is pending: %w", pj.ID, ErrConflict)
		}
		if err := s.checkNotWaiting(pj); err != nil {
			return nil, nil, nil, err
		}
		if preemption.GangFits(s.planView(), pj, ts, nil, c.Now) {
			return nil, nil, nil, fmt.Errorf("gang %s fits without a preemption: %w", pj.ID, ErrConflict)
		}
		return p, pj, w, nil
	}
	if err := place.CanRun(s.planView(), w, pj, p, ""); err != nil {
		return nil, nil, nil, err
	}
	if preemption.PlaceableNow(s.planView(), pj, p, c.Now, c.TeamRoom) {
		return nil, nil, nil, fmt.Errorf("task %s fits without a preemption: %w", p.ID, ErrConflict)
	}
	return p, pj, w, nil
}

// checkVictims checks each victim in the policy's terms, in the order
// named, that a gang victim comes with every member of its gang, and
// that p (a gang: every member) fits once they are gone. A task that is
// not a gang member finds its victims on c.WorkerID, save the other
// members of a gang taken there.
func (s *Store) checkVictims(c command.PreemptTasks, p *Task, pj *Job, w *Worker) ([]*Task, error) {
	pv, round := s.planView(), preemption.NewRound()
	gone, named := map[string]bool{}, map[string]bool{}
	var victims []*Task
	for _, vc := range c.Victims {
		v, ok := s.tasks.Lookup(vc.TaskID)
		switch {
		case !ok:
			return nil, fmt.Errorf("task %s: %w", vc.TaskID, ErrNotFound)
		case named[v.ID]:
			return nil, fmt.Errorf("%w: task %s named twice", ErrInvalid, v.ID)
		case v.AttemptID != vc.AttemptID || v.WorkerID != vc.On(c.WorkerID):
			return nil, fmt.Errorf("task %s attempt %s on %s: %w", v.ID, vc.AttemptID, vc.On(c.WorkerID), ErrStaleAttempt)
		case !pj.Spec.Gang && v.WorkerID != w.ID && !s.jobs.Get(v.JobID).Spec.Gang:
			return nil, fmt.Errorf("%w: task %s is on %s, not %s", ErrInvalid, v.ID, v.WorkerID, w.ID)
		}
		named[v.ID] = true
		if gone[v.ID] {
			victims = append(victims, v) // a member of a gang taken already
			continue
		}
		if err := preemption.VictimErr(pv, p, pj, v, round, c.MinRuntime, c.Now); err != nil {
			return nil, fmt.Errorf("task %s: %w", v.ID, err)
		}
		round.Take(pv, gone, v)
		victims = append(victims, v)
	}
	for id := range gone {
		if !named[id] {
			return nil, fmt.Errorf("task %s: %w", id, preemption.ErrGangMember)
		}
	}
	ids := strings.Join(slices.Sorted(maps.Keys(gone)), ", ")
	if pj.Spec.Gang {
		ts, _ := s.gangTasks(pj)
		if !preemption.GangFits(pv, pj, ts, gone, c.Now) {
			return nil, fmt.Errorf("gang %s would not fit beside the rest (%s): %w", pj.ID, ids, ErrConflict)
		}
		return victims, nil
	}
	if !preemption.FitsBeside(pv, w, pj, p, gone, c.Now) {
		return nil, fmt.Errorf("task %s would not fit on %s beside the rest (%s): %w", p.ID, w.ID, ids, ErrConflict)
	}
	return victims, nil
}
