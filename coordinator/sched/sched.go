// Package sched hands pending tasks to workers that ask for work.
//
// Acquire is a long poll: it matches the worker against the pending-task
// indexes, proposes the assignment through Raft (where the state machine
// re-checks it atomically), and if nothing matches it waits until the state
// signals that work may have become available, or the wait ends.
//
// A task whose attempt was lost on a worker is not handed back to that
// worker until the worker has been heard from since the loss (heldBack):
// a worker that stopped answering, frozen or cut off, must not be given
// the retry of the work it lost.
package sched

import (
	"context"
	"errors"
	"maps"
	"sync"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/auth"
	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/sched/place"
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/coordinator/view"
	"github.com/gpulayer/gpulayer/internal/clock"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// LeaseArmer is told about every new attempt so its lease is enforced,
// and says when a worker last heartbeated (the lease manager).
type LeaseArmer interface {
	Assigned(taskID, workerID, attemptID string, lease time.Duration, deadline time.Time)
	// LastSeen is this leader's last heartbeat from the worker; false
	// before its first one since the leader took office.
	LastSeen(workerID string) (time.Time, bool)
}

// Scheduler serves acquire calls on the leader.
type Scheduler struct {
	store   *state.Store
	propose state.Proposer
	leases  LeaseArmer
	clock   clock.Clock

	mu       sync.Mutex
	reserved map[string]bool
	// delivered notes, by attempt, when and under which acquire a gang
	// member placed by another worker's acquire was last handed out.
	delivered map[string]delivery
}

// delivery is one hand-out of a gang member (deliveries).
type delivery struct {
	at        time.Time
	requestID string
}

// redeliverAfter is how long a gang member handed out and not yet
// started waits before an acquire hands it out again (its answer may
// have been lost); the same acquire retried gets it again at once.
const redeliverAfter = 5 * time.Second

// New returns a scheduler.
func New(store *state.Store, propose state.Proposer, leases LeaseArmer, clk clock.Clock) *Scheduler {
	if clk == nil {
		clk = clock.Real{}
	}
	return &Scheduler{store: store, propose: propose, leases: leases, clock: clk, reserved: map[string]bool{}, delivered: map[string]delivery{}}
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
	asked := s.clock.Now() // when this acquire was received (heldBack)
	if outs, ok := s.store.AcquireReplay(workerID, req.RequestID); ok {
		got := make([]api.Assignment, len(outs))
		for i, out := range outs {
			got[i] = *s.handOut(workerID, out)
		}
		return got, nil
	}
	got, err := s.acquireOne(ctx, workerID, req, asked)
	if err != nil || len(got) == 0 {
		return nil, err
	}
	for len(got) < max(req.MaxTasks, 1) {
		more, _, _, err := s.tryOnce(ctx, workerID, req, asked, true)
		if err != nil || len(more) == 0 {
			break // what was assigned is handed out; the rest waits for the next call
		}
		got = append(got, more...)
	}
	return got, nil
}

// deliveries hands out the gang members placed on workerID that have
// not started (state.GangDeliveries), each once, then again only to the
// same acquire retried or after redeliverAfter: until the agent starts
// a member, every acquire would otherwise answer with it at once.
func (s *Scheduler) deliveries(workerID, requestID string) []api.Assignment {
	outs := s.store.GangDeliveries(workerID)
	now := s.clock.Now()
	s.mu.Lock()
	for id, d := range s.delivered {
		if now.Sub(d.at) > time.Hour {
			delete(s.delivered, id) // started or ended long since
		}
	}
	var due []state.AssignOutcome
	for _, out := range outs {
		d, ok := s.delivered[out.Task.AttemptID]
		if ok && d.requestID != requestID && now.Sub(d.at) < redeliverAfter {
			continue
		}
		s.delivered[out.Task.AttemptID] = delivery{at: now, requestID: requestID}
		due = append(due, out)
	}
	s.mu.Unlock()
	got := make([]api.Assignment, 0, len(due))
	for _, out := range due {
		got = append(got, *s.handOut(workerID, out))
	}
	return got
}

// acquireOne waits up to req.WaitSeconds for one task. An acquire that
// finds nothing but a task lost on its worker after it was received ends
// at once with nothing, rather than waiting out its wait: it can never
// have that task, and the worker's next acquire, once it has heartbeated,
// can.
func (s *Scheduler) acquireOne(ctx context.Context, workerID string, req api.AcquireRequest, asked time.Time) ([]api.Assignment, error) {
	wait := time.Duration(min(max(req.WaitSeconds, 0), api.MaxWaitSeconds)) * time.Second
	var deadline <-chan time.Time
	if wait > 0 {
		deadline = s.clock.After(wait)
	}
	for {
		changed := s.store.PendingChanged()
		if got := s.deliveries(workerID, req.RequestID); len(got) > 0 {
			return got, nil
		}
		got, retryAt, predates, err := s.tryOnce(ctx, workerID, req, asked, false)
		if err != nil || len(got) > 0 {
			return got, err
		}
		if wait == 0 || predates {
			return nil, nil
		}
		// A task passed over for its affinity or spread, or until its
		// worker is heard from (which changes no state), becomes this
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
// refuses candidates that a concurrent write took first. predates reports
// that a task was passed over because the acquire was received before the
// task's attempt was lost on this worker (match).
func (s *Scheduler) tryOnce(ctx context.Context, workerID string, req api.AcquireRequest, asked time.Time, more bool) ([]api.Assignment, time.Time, bool, error) {
	for range 16 {
		s.mu.Lock()
		cand, ok, retryAt, predates, err := s.match(workerID, req, asked)
		if err != nil || !ok {
			s.mu.Unlock()
			return nil, retryAt, predates, err
		}
		if cand.Gang != nil {
			s.mu.Unlock()
			got, err := s.assignGang(ctx, workerID, req, cand.Gang)
			if errors.Is(err, state.ErrConflict) {
				continue
			}
			return got, time.Time{}, false, err
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
			Metered:      true,
		})
		s.mu.Lock()
		delete(s.reserved, cand.TaskID)
		s.mu.Unlock()
		if errors.Is(err, state.ErrConflict) {
			continue
		}
		if err != nil {
			return nil, time.Time{}, false, err
		}
		return []api.Assignment{*s.handOut(workerID, out)}, time.Time{}, false, nil
	}
	return nil, time.Time{}, false, nil
}

// unheardRecheck is how often an acquire waiting with a task held back
// until its worker is heard from looks again: a heartbeat changes no
// state, so nothing else would wake it.
const unheardRecheck = time.Second

// match finds the best pending task for workerID's acquire (received at
// asked) that heldBack lets it have: a candidate held back is skipped and
// the match made again without it, so the task stays for other workers.
// retryAt is when to look again (a task deferred for its affinity or
// spread, or held back until its worker is heard from); predates reports
// a task held back because the acquire was received before the task's
// attempt was lost on this worker. Called with s.mu held.
func (s *Scheduler) match(workerID string, req api.AcquireRequest, asked time.Time) (cand state.Candidate, ok bool, retryAt time.Time, predates bool, err error) {
	now := s.clock.Now()
	skip, copied := s.reserved, false
	for {
		cand, ok, err = s.store.MatchAt(now.UTC(), workerID, req.Capability, max(req.MaxTasks, 1), skip)
		if err != nil || !ok {
			return cand, false, earliest(retryAt, cand.RetryAt), predates, err
		}
		taskID, why := s.heldBackCandidate(workerID, cand, asked)
		switch why {
		case handOut:
			return cand, true, time.Time{}, predates, nil
		case askedBeforeLoss:
			predates = true
		case notHeardSinceLoss:
			retryAt = earliest(retryAt, now.Add(unheardRecheck))
		}
		if !copied { // s.reserved is the other acquires': add to a copy
			skip, copied = maps.Clone(s.reserved), true
		}
		skip[taskID] = true
	}
}

// heldBackCandidate applies heldBack to a match: to the task for the
// acquiring worker, or, for a gang, to each member for the worker the
// plan places it on (only the acquiring worker's members are judged by
// when the acquire was received). It returns the task that is held back.
func (s *Scheduler) heldBackCandidate(workerID string, cand state.Candidate, asked time.Time) (string, holdBack) {
	if cand.Gang == nil {
		return cand.TaskID, s.heldBackFor(cand.TaskID, workerID, asked)
	}
	for _, m := range cand.Gang {
		at := time.Time{}
		if m.WorkerID == workerID {
			at = asked
		}
		if why := s.heldBackFor(m.TaskID, m.WorkerID, at); why != handOut {
			return m.TaskID, why
		}
	}
	return cand.TaskID, handOut
}

// heldBackFor reads the task and the worker's last heartbeat and applies
// heldBack.
func (s *Scheduler) heldBackFor(taskID, workerID string, asked time.Time) holdBack {
	t, err := s.store.Task(taskID)
	if err != nil {
		return handOut // gone meanwhile: the state machine refuses it
	}
	heard, _ := s.leases.LastSeen(workerID) // zero: not since this leader took office
	return heldBack(&t, workerID, asked, heard)
}

// holdBack is heldBack's answer.
type holdBack int

const (
	// handOut: nothing holds the task back from the worker.
	handOut holdBack = iota
	// notHeardSinceLoss: an attempt of the task was lost on the worker,
	// and the worker has not heartbeated to this leader since.
	notHeardSinceLoss
	// askedBeforeLoss: an attempt of the task was lost on the worker
	// after the acquire asking for it was received (a long poll in
	// flight while the worker was silent).
	askedBeforeLoss
)

// heldBack is the lost-attempt rule: a task with an attempt lost on
// workerID (its lease lapsed, or the worker was revoked) is not handed to
// that worker by an acquire received before the loss (asked; zero when
// another worker's acquire places it, as a gang member), nor while the
// worker's last heartbeat to this leader (heard; zero before its first
// one since this leader took office) is not after the loss. Attempts lost
// on other workers, lost to a GPU fault the worker reported itself, or
// ended otherwise, hold nothing back.
func heldBack(t *state.Task, workerID string, asked, heard time.Time) holdBack {
	why := handOut
	for _, a := range t.Attempts {
		if a.State != api.AttemptLost || a.WorkerID != workerID || a.GPUFault != "" {
			continue // a GPU fault's loss was the worker's own report: it was heard
		}
		if !asked.IsZero() && !asked.After(a.EndedAt) {
			return askedBeforeLoss
		}
		if heard.IsZero() || !heard.After(a.EndedAt) {
			why = notHeardSinceLoss
		}
	}
	return why
}

// earliest is the earlier of two times, a zero one counting as none.
func earliest(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}

// assignGang proposes a gang's placement, reserving its members while
// the proposal is in flight, and arms the lease of every member: those
// of workerID are its answer, the others wait for their workers'
// acquires.
func (s *Scheduler) assignGang(ctx context.Context, workerID string, req api.AcquireRequest, plan []place.Member) ([]api.Assignment, error) {
	s.mu.Lock()
	for _, m := range plan {
		if s.reserved[m.TaskID] {
			s.mu.Unlock()
			return nil, state.ErrConflict // another acquire is placing it
		}
	}
	for _, m := range plan {
		s.reserved[m.TaskID] = true
	}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		for _, m := range plan {
			delete(s.reserved, m.TaskID)
		}
		s.mu.Unlock()
	}()
	c := command.AssignGang{WorkerID: workerID, LeaseSeconds: req.MaxLeaseSeconds, RequestID: req.RequestID, Now: s.clock.Now().UTC(), Metered: true}
	for _, m := range plan {
		c.Members = append(c.Members, command.GangMember{TaskID: m.TaskID, WorkerID: m.WorkerID, AttemptID: auth.NewID(12), Devices: m.Devices})
	}
	if t, err := s.store.Task(plan[0].TaskID); err == nil {
		c.JobID = t.JobID
	}
	outs, err := state.Propose[[]state.AssignOutcome](ctx, s.propose, c)
	if err != nil {
		return nil, err
	}
	for _, m := range c.Members {
		if m.WorkerID == workerID {
			continue
		}
		if t, err := s.store.Task(m.TaskID); err == nil && t.AttemptID == m.AttemptID {
			s.leases.Assigned(t.ID, m.WorkerID, m.AttemptID, time.Duration(t.LeaseSeconds)*time.Second, t.LeaseExpiresAt)
		}
	}
	s.mu.Lock()
	for _, out := range outs {
		s.delivered[out.Task.AttemptID] = delivery{at: s.clock.Now(), requestID: req.RequestID}
	}
	s.mu.Unlock()
	got := make([]api.Assignment, 0, len(outs))
	for _, out := range outs {
		got = append(got, *s.handOut(workerID, out))
	}
	return got, nil
}

// handOut arms the lease of an assignment (again, for a replayed one: the
// deadline only ever moves later) and returns it.
func (s *Scheduler) handOut(workerID string, out state.AssignOutcome) *api.Assignment {
	a := view.Assignment(out)
	s.leases.Assigned(a.ID, workerID, a.AttemptID, time.Duration(a.LeaseSeconds)*time.Second, out.LeaseUntil)
	return &a
}
