package sim

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/sched/preemption"
)

// The preemption loop, as the leader runs it (coordinator/preempt): at
// every step, after the ends and arrivals and before the acquires, the
// run asks the state for the preemptions due (state.PlanPreemption) and
// applies them. A victim's agent stops it when its job's grace has run:
// the attempt ends (exit 143) and, for a job with a checkpoint, reports
// one it saved; a gang's other members end with it. The next acquires
// place the preemptor on the freed GPUs.

// maxPreemptionsPerStep bounds one step's loop (the leader's PerLook).
const maxPreemptionsPerStep = 16

// preempt applies the preemptions due now.
func (sm *Sim) preempt() error {
	if sm.tr.Preemption == nil || sm.loopOff {
		return nil
	}
	opts := preemption.Options{MinRuntime: time.Duration(sm.tr.Preemption.MinRuntime) * time.Second}
	for range maxPreemptionsPerStep {
		c, ok := sm.s.PlanPreemption(sm.at(), opts)
		if !ok {
			return nil
		}
		if err := sm.apply(c); err != nil {
			return fmt.Errorf("the state refused the preemption it planned: %w", err)
		}
		if c.For == "" {
			return nil // a sweep of expired holds
		}
		sm.rep.Preemptions++
		for _, v := range c.Victims {
			r := sm.running[v.TaskID]
			grace := r.job.Grace
			if grace == 0 {
				grace = command.DefaultPreemptionGrace
			}
			sm.stopping[v.TaskID] = sm.now + grace
		}
	}
	return nil
}

// stopDue stops the victims whose grace has run.
func (sm *Sim) stopDue() error {
	for _, id := range dueBy(sm.stopping, func(at int) int { return at }, sm.now) {
		tk, err := sm.s.Task(id)
		if err != nil {
			return err
		}
		if _, ok := sm.running[id]; !ok || tk.State == "pending" {
			continue // ended with its gang
		}
		end := command.FinishTask{TaskID: id, WorkerID: tk.WorkerID, AttemptID: tk.AttemptID, ExitCode: 143, Now: sm.at()}
		if sm.running[id].job.Checkpoint {
			sum := sha256.Sum256([]byte(id + "/" + tk.AttemptID))
			digest := hex.EncodeToString(sum[:])
			if err := sm.apply(command.RecordArtifact{Digest: digest, Size: 1, NodeID: "sim", By: "sim", Now: sm.at()}); err != nil {
				return err
			}
			end.Checkpoint = &command.Checkpoint{SHA256: digest, Size: 1, Format: command.CheckpointFile}
			sm.ckpt[id] = digest
		}
		if err := sm.apply(end); err != nil {
			return err
		}
	}
	return sm.requeueEnded()
}

// requeueEnded moves back to the pending set every running task the
// state put back in the queue (a stopped victim, a gang's members).
func (sm *Sim) requeueEnded() error {
	for _, id := range slices.Sorted(maps.Keys(sm.running)) {
		tk, err := sm.s.Task(id)
		if err != nil {
			return err
		}
		if tk.State != "pending" {
			continue
		}
		r := sm.running[id]
		delete(sm.running, id)
		delete(sm.stopping, id)
		sm.pending[id] = waiting{team: r.job.Team, centi: taskCenti(r.job)}
		sm.rep.Requeued++
	}
	return nil
}

// nextPreemptEvent is when a victim's grace ends, or, while work waits,
// when a running task passes its minimum runtime (and may then be
// preempted): the run must step there.
func (sm *Sim) nextPreemptEvent() (int, bool) {
	t, ok := 0, false
	for _, at := range sm.stopping {
		if !ok || at < t {
			t, ok = at, true
		}
	}
	if sm.tr.Preemption == nil || len(sm.pending) == 0 {
		return t, ok
	}
	for _, r := range sm.running {
		if at := r.started + sm.tr.Preemption.MinRuntime; at > sm.now && (!ok || at < t) {
			t, ok = at, true
		}
	}
	return t, ok
}

// dueBy lists, by id, the entries of m due by now (when says when each is).
func dueBy[V any](m map[string]V, when func(V) int, now int) []string {
	var due []string
	for id, v := range m {
		if when(v) <= now {
			due = append(due, id)
		}
	}
	slices.Sort(due)
	return due
}
