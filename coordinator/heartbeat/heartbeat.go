package heartbeat

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state"
)

// Store is what a beat reads of the replicated state.
type Store interface {
	Worker(id string) (state.WorkerRecord, error)
	ActiveTasks(workerID string) []state.ActiveTask
	HeldAttempt(taskID, workerID string) (string, bool)
}

// Leases renews, in the leader's memory, the leases of the tasks a worker
// reports running (the lease manager).
type Leases interface {
	Heartbeat(workerID string, running []string) time.Time
}

// Beat is one heartbeat, bounded and checked by the caller. Executors and
// Devices are nil when the worker did not send them (no change).
type Beat struct {
	WorkerID  string
	Executors []string
	Devices   []command.Device
	// MaxTasks is how many tasks the agent runs at once (0: not said).
	MaxTasks int
	// Running are the ids of the tasks the worker runs now.
	Running []string
	Now     time.Time
}

// Answer is what the worker is told.
type Answer struct {
	// Status is the worker's status after the beat: draining or stopping
	// tell the agent to drain or stop.
	Status string
	// ClearGPUs are GPUs an admin asked the agent to clear.
	ClearGPUs []string
	// MIGLayouts are MIG layouts asked of the worker's GPUs that its
	// agent has yet to apply (state/gpuops/miglayout.go).
	MIGLayouts []state.MIGLayout
	// Cancel are tasks the worker must stop: cancelled, preempted by a
	// drain or stop, or not (any longer) its own.
	Cancel []string
	// Preempt are those of Cancel preempted for another task (not by a
	// drain or a stop, nor cancelled): each gets its job's preemption
	// grace; the others the agent's stop grace.
	Preempt []string
	// LeaseExpiresAt is the earliest lease the beat renewed (zero: none).
	LeaseExpiresAt time.Time
}

// Handler answers beats on the leader.
type Handler struct {
	Store   Store
	Propose state.Proposer
	Leases  Leases
}

// Beat applies one heartbeat and says what the worker must do. The worker
// it answers about is the state after the beat's own writes.
func (h *Handler) Beat(ctx context.Context, b Beat) (Answer, error) {
	rec, err := h.Store.Worker(b.WorkerID)
	if err != nil {
		return Answer{}, err
	}
	wk := rec.Worker
	if inventoryChanged(b, &wk) {
		ex, dev := b.Executors, b.Devices
		if ex == nil {
			ex = wk.Executors
		}
		if dev == nil {
			dev = wk.Devices
		}
		rec, err := state.Propose[state.WorkerRecord](ctx, h.Propose, command.UpdateWorker{WorkerID: wk.ID, Executors: ex, Devices: dev, Now: b.Now, AuditDevices: true, MaxTasks: b.MaxTasks})
		if err != nil {
			return Answer{}, err
		}
		wk = rec.Worker
	}
	if wk.Status == state.WorkerOffline {
		rec, err := state.Propose[state.WorkerRecord](ctx, h.Propose, command.SetWorkerStatus{WorkerID: wk.ID, Status: state.WorkerReady, Now: b.Now})
		switch {
		case err == nil:
			wk = rec.Worker
		case errors.Is(err, state.ErrConflict):
			// Its status moved on between the read and the write (a
			// drain, a stop, a revocation): answer as it is now.
			now, err := h.Store.Worker(wk.ID)
			if err != nil {
				return Answer{}, err
			}
			wk = now.Worker
		default:
			return Answer{}, fmt.Errorf("heartbeat of %s: %w", wk.ID, err)
		}
	}
	a := Answer{Status: wk.Status, ClearGPUs: wk.ClearGPUs, MIGLayouts: wk.PendingMIGLayouts(), Cancel: []string{}}
	a.LeaseExpiresAt = h.Leases.Heartbeat(wk.ID, b.Running)
	for _, t := range h.Store.ActiveTasks(wk.ID) {
		if t.CancelRequested || t.Preempted {
			a.Cancel = append(a.Cancel, t.TaskID)
		}
		if t.ForTask && !t.CancelRequested {
			a.Preempt = append(a.Preempt, t.TaskID)
		}
	}
	for _, id := range b.Running {
		if _, held := h.Store.HeldAttempt(id, wk.ID); !held && !slices.Contains(a.Cancel, id) {
			a.Cancel = append(a.Cancel, id)
		}
	}
	return a, nil
}
