package preemption

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/sched/place"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
	"github.com/gpulayer/gpulayer/coordinator/state/stateerr"
)

// Checked is a PreemptTasks command as Check found it: the task it is
// for and its job, the worker it names, and the victims in the order
// named.
type Checked struct {
	For     *record.Task
	Job     *record.Job
	Worker  *record.Worker
	Victims []*record.Task
}

// Check re-checks, as the state machine applies it, a preemption the
// leader decided (Plan) on an older state: the task it is for still
// waits and could not be placed as things are, every victim still runs
// the attempt named and may be preempted for it (a gang's with every
// running member named), and the task (a gang: every member) fits once
// they are gone. A command with no For (a sweep of expired holds) is the
// caller's. The errors wrap the state's sentinels (stateerr) or this
// package's VictimErr set.
func Check(v CandidateView, c command.PreemptTasks) (Checked, error) {
	p, pj, w, err := checkFor(v, c)
	if err != nil {
		return Checked{}, err
	}
	victims, err := checkVictims(v, c, p, pj, w)
	if err != nil {
		return Checked{}, err
	}
	return Checked{For: p, Job: pj, Worker: w, Victims: victims}, nil
}

// checkFor checks the task a preemption is for: pending in the
// queue, asking for GPUs, and placeable nowhere as things are (a gang
// member: its gang, every member pending and waiting for no dependency,
// cannot be placed whole); and the worker, which must be able to run it
// (a gang's is where its first victim runs).
func checkFor(v CandidateView, c command.PreemptTasks) (*record.Task, *record.Job, *record.Worker, error) {
	p := v.Task(c.For)
	if p == nil {
		return nil, nil, nil, fmt.Errorf("task %s: %w", c.For, stateerr.ErrNotFound)
	}
	pj := v.Job(p.JobID)
	switch {
	case p.State != record.TaskPending:
		return nil, nil, nil, fmt.Errorf("task %s is %s: %w", p.ID, p.State, stateerr.ErrConflict)
	case pj.Spec.Resources == nil || pj.Spec.Resources.GPUs == 0:
		return nil, nil, nil, fmt.Errorf("%w: task %s asks for no GPUs", stateerr.ErrInvalid, p.ID)
	case len(c.Victims) == 0:
		return nil, nil, nil, fmt.Errorf("%w: a preemption names no victim", stateerr.ErrInvalid)
	}
	w := v.Worker(c.WorkerID)
	if w == nil {
		return nil, nil, nil, fmt.Errorf("worker %s: %w", c.WorkerID, stateerr.ErrNotFound)
	}
	if pj.Spec.Gang {
		ts, ok := v.GangMembers(pj)
		if !ok {
			return nil, nil, nil, fmt.Errorf("job %s: not every gang member is pending: %w", pj.ID, stateerr.ErrConflict)
		}
		if v.Waiting(pj) {
			return nil, nil, nil, fmt.Errorf("job %s waits for its dependencies: %w", pj.ID, stateerr.ErrConflict)
		}
		if GangFits(v, pj, ts, nil, c.Now) {
			return nil, nil, nil, fmt.Errorf("gang %s fits without a preemption: %w", pj.ID, stateerr.ErrConflict)
		}
		return p, pj, w, nil
	}
	if err := place.CanRun(v, w, pj, p, ""); err != nil {
		return nil, nil, nil, err
	}
	if PlaceableNow(v, pj, p, c.Now, c.TeamRoom) {
		return nil, nil, nil, fmt.Errorf("task %s fits without a preemption: %w", p.ID, stateerr.ErrConflict)
	}
	return p, pj, w, nil
}

// checkVictims checks each victim in the policy's terms, in the order
// named, that a gang victim comes with every member of its gang, and
// that p (a gang: every member) fits once they are gone. A task that is
// not a gang member finds its victims on c.WorkerID, save the other
// members of a gang taken there.
func checkVictims(v CandidateView, c command.PreemptTasks, p *record.Task, pj *record.Job, w *record.Worker) ([]*record.Task, error) {
	round := NewRound()
	gone, named := map[string]bool{}, map[string]bool{}
	var victims []*record.Task
	for _, vc := range c.Victims {
		vt := v.Task(vc.TaskID)
		switch {
		case vt == nil:
			return nil, fmt.Errorf("task %s: %w", vc.TaskID, stateerr.ErrNotFound)
		case named[vt.ID]:
			return nil, fmt.Errorf("%w: task %s named twice", stateerr.ErrInvalid, vt.ID)
		case vt.AttemptID != vc.AttemptID || vt.WorkerID != vc.On(c.WorkerID):
			return nil, fmt.Errorf("task %s attempt %s on %s: %w", vt.ID, vc.AttemptID, vc.On(c.WorkerID), stateerr.ErrStaleAttempt)
		case !pj.Spec.Gang && vt.WorkerID != w.ID && !v.Job(vt.JobID).Spec.Gang:
			return nil, fmt.Errorf("%w: task %s is on %s, not %s", stateerr.ErrInvalid, vt.ID, vt.WorkerID, w.ID)
		}
		named[vt.ID] = true
		if gone[vt.ID] {
			victims = append(victims, vt) // a member of a gang taken already
			continue
		}
		if err := VictimErr(v, p, pj, vt, round, c.MinRuntime, c.Now); err != nil {
			return nil, fmt.Errorf("task %s: %w", vt.ID, err)
		}
		round.Take(v, gone, vt)
		victims = append(victims, vt)
	}
	for id := range gone {
		if !named[id] {
			return nil, fmt.Errorf("task %s: %w", id, ErrGangMember)
		}
	}
	ids := strings.Join(slices.Sorted(maps.Keys(gone)), ", ")
	if pj.Spec.Gang {
		ts, _ := v.GangMembers(pj)
		if !GangFits(v, pj, ts, gone, c.Now) {
			return nil, fmt.Errorf("gang %s would not fit beside the rest (%s): %w", pj.ID, ids, stateerr.ErrConflict)
		}
		return victims, nil
	}
	if !FitsBeside(v, w, pj, p, gone, c.Now) {
		return nil, fmt.Errorf("task %s would not fit on %s beside the rest (%s): %w", p.ID, w.ID, ids, stateerr.ErrConflict)
	}
	return victims, nil
}
