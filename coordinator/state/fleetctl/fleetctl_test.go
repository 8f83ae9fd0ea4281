package fleetctl

import (
	"errors"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
	"github.com/gpulayer/gpulayer/coordinator/state/stateerr"
)

var t0 = time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)

// effects records what an operation caused; PreemptAll counts the
// workers whose tasks were stopped.
type effects struct {
	kinds     []string
	pending   int
	preempted []string
}

func (e *effects) Audit(ev command.AuditEvent) { e.kinds = append(e.kinds, ev.Kind) }
func (e *effects) MarkPending()                { e.pending++ }
func (e *effects) PreemptAll(w *record.Worker, reason string, _ time.Time) string {
	e.preempted = append(e.preempted, w.ID)
	return "stopped: " + reason
}

// The control actions as a table: the worker before, the action, what is
// refused, the worker after and what it caused.
func TestControl(t *testing.T) {
	soon := t0.Add(time.Hour)
	cases := []struct {
		name      string
		status    string
		drainedBy string
		c         command.ControlWorker
		err       error
		acted     bool
		status2   string
		deadline  time.Time
		kinds     []string
		preempted int
	}{
		{"drain with a deadline: tasks go on", record.WorkerReady, "", command.ControlWorker{Action: command.ActionDrain, Deadline: soon}, nil, true,
			record.WorkerDraining, soon, []string{"worker.drained"}, 0},
		{"drain by now: tasks stopped", record.WorkerReady, "", command.ControlWorker{Action: command.ActionDrain, Deadline: t0}, nil, true,
			record.WorkerDraining, time.Time{}, []string{"worker.drained"}, 1},
		{"drain with no deadline: tasks go on", record.WorkerReady, "", command.ControlWorker{Action: command.ActionDrain}, nil, true,
			record.WorkerDraining, time.Time{}, []string{"worker.drained"}, 0},
		{"deregister", record.WorkerReady, "", command.ControlWorker{Action: command.ActionDeregister, Deadline: soon}, nil, true,
			record.WorkerDraining, soon, []string{"worker.deregistering"}, 0},
		{"stop", record.WorkerReady, "", command.ControlWorker{Action: command.ActionStop}, nil, true,
			record.WorkerStopping, time.Time{}, []string{"worker.stopped"}, 1},
		{"a drain of a stopping worker", record.WorkerStopping, "admin", command.ControlWorker{Action: command.ActionDrain}, stateerr.ErrConflict, false,
			record.WorkerStopping, time.Time{}, nil, 0},
		{"the agent's drain leaves the admin's", record.WorkerDraining, "admin", command.ControlWorker{Action: command.ActionDrain, Self: true, Deadline: t0}, nil, true,
			record.WorkerDraining, soon, []string{"worker.drained"}, 0},
		{"resume", record.WorkerDraining, "admin", command.ControlWorker{Action: command.ActionResume}, nil, true,
			record.WorkerReady, time.Time{}, []string{"worker.resumed"}, 0},
		{"the agent may not resume the admin's drain", record.WorkerDraining, "admin", command.ControlWorker{Action: command.ActionResume, Self: true}, stateerr.ErrConflict, false,
			record.WorkerDraining, soon, nil, 0},
		{"resuming a ready worker does nothing", record.WorkerReady, "", command.ControlWorker{Action: command.ActionResume}, nil, false,
			record.WorkerReady, time.Time{}, nil, 0},
		{"a revoked worker", record.WorkerRevoked, "", command.ControlWorker{Action: command.ActionDrain}, stateerr.ErrConflict, false,
			record.WorkerRevoked, time.Time{}, nil, 0},
		{"an unknown action", record.WorkerReady, "", command.ControlWorker{Action: "pause"}, stateerr.ErrInvalid, false,
			record.WorkerReady, time.Time{}, nil, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := &record.Worker{ID: "w1", Status: c.status, DrainedBy: c.drainedBy}
			if c.status == record.WorkerDraining {
				w.DrainDeadline = soon
			}
			var fx effects
			c.c.Now, c.c.By = t0, "admin"
			acted, err := Control(&fx, w, c.c)
			if !errors.Is(err, c.err) || acted != c.acted {
				t.Fatalf("acted %v, err %v; want %v, %v", acted, err, c.acted, c.err)
			}
			if c.err == nil && c.acted {
				wantBy, dereg := c.drainedBy, c.c.Action == command.ActionDeregister
				switch {
				case c.status2 == record.WorkerReady:
					wantBy = ""
				case c.drainedBy == "": // drained or stopped now, by whoever asked
					wantBy = "admin"
				}
				if w.DrainedBy != wantBy || w.Deregister != dereg {
					t.Fatalf("drained by %q, deregister %v; want %q, %v", w.DrainedBy, w.Deregister, wantBy, dereg)
				}
			}
			if w.Status != c.status2 || !w.DrainDeadline.Equal(c.deadline) || !slices.Equal(fx.kinds, c.kinds) || len(fx.preempted) != c.preempted {
				t.Fatalf("status %s, deadline %v, events %v, preempted %v; want %s, %v, %v, %d",
					w.Status, w.DrainDeadline, fx.kinds, fx.preempted, c.status2, c.deadline, c.kinds, c.preempted)
			}
		})
	}
}

// A resume ends a deregistration; an agent's new drain replaces its own
// earlier one (not an admin's).
func TestResumeAndSelfDrain(t *testing.T) {
	w := &record.Worker{ID: "w1", Status: record.WorkerDraining, DrainedBy: "admin", Deregister: true, DrainDeadline: t0.Add(time.Hour)}
	var fx effects
	if _, err := Control(&fx, w, command.ControlWorker{Action: command.ActionResume, By: "admin", Now: t0}); err != nil || w.Deregister || w.DrainedBy != "" || !w.DrainDeadline.IsZero() {
		t.Fatalf("resumed: %v, %+v", err, w)
	}
	later := t0.Add(2 * time.Hour)
	for _, deadline := range []time.Time{t0.Add(time.Hour), later} {
		if _, err := Control(&fx, w, command.ControlWorker{Action: command.ActionDrain, Self: true, By: "w1", Deadline: deadline, Now: t0}); err != nil {
			t.Fatal(err)
		}
	}
	if w.DrainedBy != DrainedBySelf || !w.DrainDeadline.Equal(later) {
		t.Fatalf("after two drains of its own: by %q until %v, want %q until %v", w.DrainedBy, w.DrainDeadline, DrainedBySelf, later)
	}
}

// The drains due are those past their deadline with tasks not yet told
// to stop; expiring one stops them and clears the deadline.
func TestDrainDeadlines(t *testing.T) {
	ws := map[string]*record.Worker{
		"b": {ID: "b", Status: record.WorkerDraining, DrainDeadline: t0},
		"a": {ID: "a", Status: record.WorkerDraining, DrainDeadline: t0.Add(-time.Minute)},
		"c": {ID: "c", Status: record.WorkerDraining, DrainDeadline: t0.Add(time.Minute)},
		"d": {ID: "d", Status: record.WorkerDraining},
		"e": {ID: "e", Status: record.WorkerReady, DrainDeadline: t0.Add(-time.Hour)},
	}
	if next, ok := NextDeadline(maps.Values(ws)); !ok || !next.Equal(t0.Add(-time.Minute)) {
		t.Fatalf("next deadline %v %v", next, ok)
	}
	due := DrainsDue(maps.Values(ws), t0)
	if !slices.Equal(due, []string{"a", "b"}) {
		t.Fatalf("due %v, want [a b]", due)
	}
	var fx effects
	for _, id := range due {
		ExpireDrain(&fx, ws[id], t0)
	}
	if !slices.Equal(fx.preempted, due) || len(DrainsDue(maps.Values(ws), t0)) != 0 {
		t.Fatalf("preempted %v; due after %v", fx.preempted, DrainsDue(maps.Values(ws), t0))
	}
	if next, ok := NextDeadline(maps.Values(ws)); !ok || !next.Equal(t0.Add(time.Minute)) {
		t.Fatalf("next deadline after %v %v", next, ok)
	}
}

// Only a worker that cannot work and holds no task is forgotten.
func TestForgettable(t *testing.T) {
	for status, ok := range map[string]bool{
		record.WorkerOffline: true, record.WorkerRevoked: true, record.WorkerPending: true,
		record.WorkerReady: false, record.WorkerDraining: false, record.WorkerStopping: false,
	} {
		w := &record.Worker{ID: "w1", Status: status}
		if err := Forgettable(w); (err == nil) != ok {
			t.Errorf("%s: %v", status, err)
		}
		w.Hold("t1")
		if err := Forgettable(w); !errors.Is(err, stateerr.ErrConflict) {
			t.Errorf("%s holding a task: %v, want ErrConflict", status, err)
		}
	}
}
