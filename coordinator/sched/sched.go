// Package sched hands pending tasks to workers that ask for work.
//
// Acquire is a long poll: it matches the worker against the pending-task
// indexes, proposes the assignment through Raft (where the state machine
// re-checks it atomically), and if nothing matches it waits until the state
// signals that work may have become available, or the wait ends.
package sched

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/auth"
	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/coordinator/view"
	"github.com/gpulayer/gpulayer/internal/clock"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// LeaseArmer is told about every new attempt so its lease is enforced.
type LeaseArmer interface {
	Assigned(taskID, workerID, attemptID string, lease time.Duration, deadline time.Time)
}

// Scheduler serves acquire calls on the leader.
type Scheduler struct {
	store   *state.Store
	propose state.Proposer
	leases  LeaseArmer
	clock   clock.Clock

	mu       sync.Mutex
	reserved map[string]bool
}

// New returns a scheduler.
func New(store *state.Store, propose state.Proposer, leases LeaseArmer, clk clock.Clock) *Scheduler {
	if clk == nil {
		clk = clock.Real{}
	}
	return &Scheduler{store: store, propose: propose, leases: leases, clock: clk, reserved: map[string]bool{}}
}

// Acquire returns up to req.MaxTasks tasks (at least one) for the worker,
// or none once wait has passed with nothing to hand out: it waits for the
// first, then takes what else matches at once. Errors wrap the state sentinels (worker revoked,
// pending, not registered) or the proposer's errors.
//
// A request id the worker's last assignment was made under, while that
// attempt is still the worker's, gets that assignment again at once: the
// retry of a call whose answer was lost. Two calls under one id racing
// each other are settled by the state machine, which answers the second
// assignment proposed with the first.
func (s *Scheduler) Acquire(ctx context.Context, workerID string, req api.AcquireRequest) ([]api.Assignment, error) {
	if outs, ok := s.store.AcquireReplay(workerID, req.RequestID); ok {
		got := make([]api.Assignment, len(outs))
		for i, out := range outs {
			got[i] = *s.handOut(workerID, out)
		}
		return got, nil
	}
	first, err := s.acquireOne(ctx, workerID, req)
	if err != nil || first == nil {
		return nil, err
	}
	got := []api.Assignment{*first}
	for len(got) < max(req.MaxTasks, 1) {
		a, _, err := s.tryOnce(ctx, workerID, req, true)
		if err != nil || a == nil {
			break // what was assigned is handed out; the rest waits for the next call
		}
		got = append(got, *a)
	}
	return got, nil
}

// acquireOne waits up to req.WaitSeconds for one task.
func (s *Scheduler) acquireOne(ctx context.Context, workerID string, req api.AcquireRequest) (*api.Assignment, error) {
	wait := time.Duration(min(max(req.WaitSeconds, 0), api.MaxWaitSeconds)) * time.Second
	var deadline <-chan time.Time
	if wait > 0 {
		deadline = s.clock.After(wait)
	}
	for {
		changed := s.store.PendingChanged()
		a, retryAt, err := s.tryOnce(ctx, workerID, req, false)
		if err != nil || a != nil {
			return a, err
		}
		if wait == 0 {
			return nil, nil
		}
		// A task passed over for its affinity or spread becomes this
		// worker's to take at retryAt, with no state change to wake us.
		var retry <-chan time.Time
		if !retryAt.IsZero() {
			retry = s.clock.After(max(retryAt.Sub(s.clock.Now()), time.Millisecond))
		}
		select {
		case <-changed:
		case <-retry:
		case <-deadline:
			return nil, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// tryOnce matches and proposes; it retries matching while the state machine
// refuses candidates that a concurrent write took first.
func (s *Scheduler) tryOnce(ctx context.Context, workerID string, req api.AcquireRequest, more bool) (*api.Assignment, time.Time, error) {
	for range 16 {
		s.mu.Lock()
		cand, ok, err := s.store.MatchAt(s.clock.Now().UTC(), workerID, req.Capability, s.reserved)
		if err != nil || !ok {
			s.mu.Unlock()
			return nil, cand.RetryAt, err
		}
		s.reserved[cand.TaskID] = true
		s.mu.Unlock()

		// An assignment that commits after ctx ended (the worker stopped
		// waiting) is not armed here; the lease manager adopts it from
		// the state (lease.Manager.adopt).
		out, err := state.Propose[state.AssignOutcome](ctx, s.propose, command.AssignTask{
			TaskID:       cand.TaskID,
			WorkerID:     workerID,
			AttemptID:    auth.NewID(12),
			Devices:      cand.Devices,
			LeaseSeconds: req.MaxLeaseSeconds,
			Now:          s.clock.Now().UTC(),
			RequestID:    req.RequestID,
			More:         more,
		})
		s.mu.Lock()
		delete(s.reserved, cand.TaskID)
		s.mu.Unlock()
		if errors.Is(err, state.ErrConflict) {
			continue
		}
		if err != nil {
			return nil, time.Time{}, err
		}
		return s.handOut(workerID, out), time.Time{}, nil
	}
	return nil, time.Time{}, nil
}

// handOut arms the lease of an assignment (again, for a replayed one: the
// deadline only ever moves later) and returns it.
func (s *Scheduler) handOut(workerID string, out state.AssignOutcome) *api.Assignment {
	a := view.Assignment(out)
	s.leases.Assigned(a.ID, workerID, a.AttemptID, time.Duration(a.LeaseSeconds)*time.Second, out.LeaseUntil)
	return &a
}
