// Package fleetctl is the state machine's room for fleet control: a
// worker is drained (no new task; its tasks go on until a deadline),
// stopped (its tasks are stopped now), resumed, or deregistered (drained,
// then forgotten once it holds no task), and an admin forgets a worker
// that is dead, revoked or never approved. A task stopped this way is
// preempted: its attempt ends as such, and it is requeued without using
// up one of its attempts.
//
// Each operation takes the worker record it changes, found by the store,
// and an Effects for what it causes beyond the record: audit events, room
// for placement, and the stopping of the worker's tasks, which are the
// store's (the room knows no task). Like every room it reads no clock
// (the command's Now is the time).
package fleetctl

import (
	"fmt"
	"iter"
	"slices"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
	"github.com/gpulayer/gpulayer/coordinator/state/stateerr"
)

// DrainedBySelf is the DrainedBy of a drain the worker's agent asked for.
const DrainedBySelf = "self"

// Effects is what an operation causes beyond the worker record.
type Effects interface {
	// Audit records an audit event.
	Audit(e command.AuditEvent)
	// MarkPending says that work may be placed that could not be before.
	MarkPending()
	// PreemptAll stops every task w holds, for reason, and says what it
	// did, for the audit log.
	PreemptAll(w *record.Worker, reason string, now time.Time) string
}

// Control applies a drain, stop, resume or deregister to w. A revoked or
// pending worker is refused; resuming one that is neither draining nor
// stopping changes nothing, and an agent may not resume a drain an admin
// made. It reports whether it acted (a resume of a worker neither
// draining nor stopping does not): the caller then forgets a
// deregistering worker that holds no task.
func Control(fx Effects, w *record.Worker, c command.ControlWorker) (acted bool, err error) {
	switch w.Status {
	case record.WorkerRevoked, record.WorkerPending:
		return false, fmt.Errorf("worker %s is %s: %w", w.ID, w.Status, stateerr.ErrConflict)
	}
	by := c.By
	if c.Self {
		by = DrainedBySelf
	}
	switch c.Action {
	case command.ActionDrain, command.ActionDeregister:
		err := drain(fx, w, c, by)
		return err == nil, err
	case command.ActionStop:
		w.Status = record.WorkerStopping
		w.DrainedBy = by
		w.DrainDeadline = time.Time{}
		fx.Audit(command.AuditEvent{Time: c.Now, Kind: "worker.stopped", Actor: c.By, WorkerID: w.ID, Subject: w.ID, Source: c.Source, Detail: fx.PreemptAll(w, "worker "+w.ID+" stopped", c.Now)})
	case command.ActionResume:
		if w.Status != record.WorkerDraining && w.Status != record.WorkerStopping {
			return false, nil
		}
		if c.Self && w.DrainedBy != DrainedBySelf {
			return false, fmt.Errorf("worker %s was %s by %s; only an admin may resume it: %w", w.ID, w.Status, w.DrainedBy, stateerr.ErrConflict)
		}
		w.Status = record.WorkerReady
		w.DrainedBy, w.DrainDeadline, w.Deregister = "", time.Time{}, false
		fx.Audit(command.AuditEvent{Time: c.Now, Kind: "worker.resumed", Actor: c.By, WorkerID: w.ID, Subject: w.ID, Source: c.Source})
		fx.MarkPending()
	default:
		return false, fmt.Errorf("%w: worker action %q", stateerr.ErrInvalid, c.Action)
	}
	return true, nil
}

// drain makes w take no new task until resumed, with its tasks stopped
// at c.Deadline (now, when it is not after c.Now). A stopping worker
// stays stopping: a drain would let its tasks run on. A worker already
// drained by an admin keeps that drain when its agent asks for one.
func drain(fx Effects, w *record.Worker, c command.ControlWorker, by string) error {
	kind := "worker.drained"
	if c.Action == command.ActionDeregister {
		kind = "worker.deregistering"
		w.Deregister = true
	}
	switch {
	case w.Status == record.WorkerStopping:
		if c.Action == command.ActionDrain {
			return fmt.Errorf("worker %s is stopping; resume it first: %w", w.ID, stateerr.ErrConflict)
		}
	case w.Status == record.WorkerDraining && c.Self && w.DrainedBy != DrainedBySelf:
		// the admin's drain and deadline stand
	default:
		w.Status = record.WorkerDraining
		w.DrainedBy = by
		w.DrainDeadline = c.Deadline
	}
	detail := "deadline " + c.Deadline.UTC().Format(command.TimeLayout)
	if w.Status == record.WorkerDraining && !w.DrainDeadline.IsZero() && !w.DrainDeadline.After(c.Now) {
		w.DrainDeadline = time.Time{}
		detail = fx.PreemptAll(w, "worker "+w.ID+" drained", c.Now)
	}
	fx.Audit(command.AuditEvent{Time: c.Now, Kind: kind, Actor: c.By, WorkerID: w.ID, Subject: w.ID, Source: c.Source, Detail: detail})
	return nil
}

// due reports whether w drains with a deadline at or before now whose
// tasks have not yet been told to stop.
func due(w *record.Worker, now time.Time) bool {
	return w.Status == record.WorkerDraining && !w.DrainDeadline.IsZero() && !w.DrainDeadline.After(now)
}

// DrainsDue lists, sorted, the draining workers whose deadline is at or
// before now.
func DrainsDue(workers iter.Seq[*record.Worker], now time.Time) []string {
	var out []string
	for w := range workers {
		if due(w, now) {
			out = append(out, w.ID)
		}
	}
	slices.Sort(out)
	return out
}

// ExpireDrain stops the tasks left on w, whose drain deadline has come,
// and says how many it held.
func ExpireDrain(fx Effects, w *record.Worker, now time.Time) int {
	n := w.HeldCount()
	w.DrainDeadline = time.Time{}
	detail := fx.PreemptAll(w, "drain deadline passed on worker "+w.ID, now)
	fx.Audit(command.AuditEvent{Time: now, Kind: "worker.drain_deadline", WorkerID: w.ID, Subject: w.ID, Detail: detail})
	return n
}

// NextDeadline is the earliest deadline of a draining worker whose tasks
// have not yet been told to stop, if any.
func NextDeadline(workers iter.Seq[*record.Worker]) (time.Time, bool) {
	var next time.Time
	for w := range workers {
		if w.Status == record.WorkerDraining && !w.DrainDeadline.IsZero() && (next.IsZero() || w.DrainDeadline.Before(next)) {
			next = w.DrainDeadline
		}
	}
	return next, !next.IsZero()
}

// Forgettable refuses to forget a worker that may still work (ready,
// draining, stopping) or that still holds a task: its attempts end first
// (a lost lease, a revocation), and the task goes back to the queue with
// them. A dead (offline), revoked or never approved worker with no task
// may be forgotten.
func Forgettable(w *record.Worker) error {
	switch w.Status {
	case record.WorkerRevoked, record.WorkerOffline, record.WorkerPending:
	default:
		return fmt.Errorf("worker %s is %s; only a revoked, offline or unapproved worker is forgotten (revoke it, or have it deregister): %w", w.ID, w.Status, stateerr.ErrConflict)
	}
	if n := w.HeldCount(); n > 0 {
		return fmt.Errorf("worker %s still holds %d tasks; it is forgotten once their attempts end (its leases run out, or revoke it): %w", w.ID, n, stateerr.ErrConflict)
	}
	return nil
}
