package agent

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/gpulayer/gpulayer/agent/runner"
	"github.com/gpulayer/gpulayer/internal/clock"
)

// leaseBook keeps, for each attempt this agent was given, the time until
// which its lease is known to hold, from the agent's own clock: the
// coordinator arms or renews a lease when it receives a request (the
// acquire that assigned the attempt, a heartbeat that reported its task),
// so it holds at least until the moment that request was sent plus the
// lease. The runner asks it (Hold) before it starts a task's process: an
// agent that was paused or cut off between the assignment and the start
// must not start a process for an attempt the coordinator may already have
// counted lost and handed to another worker.
type leaseBook struct {
	clock clock.Clock

	mu      sync.Mutex
	known   map[string]leaseEntry // by attempt id
	renewal chan struct{}         // closed and replaced at each renewal
	nudge   chan struct{}         // asks the heartbeat loop to beat now
}

type leaseEntry struct {
	until time.Time
	lease time.Duration
}

var _ runner.Leases = (*leaseBook)(nil)

func newLeaseBook(c clock.Clock) *leaseBook {
	return &leaseBook{clock: c, known: map[string]leaseEntry{}, renewal: make(chan struct{}), nudge: make(chan struct{}, 1)}
}

// assigned records an attempt given by an acquire sent at sent.
func (b *leaseBook) assigned(attemptID string, lease time.Duration, sent time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.known[attemptID] = leaseEntry{until: sent.Add(lease), lease: lease}
}

// renewed records a heartbeat sent at sent and answered: the leases of
// attempts (those it reported, less those the answer cancelled) hold
// until sent plus their lease. Attempts no longer running whose lease has
// long passed are forgotten.
func (b *leaseBook) renewed(attempts []string, running []string, sent time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, id := range attempts {
		if e, ok := b.known[id]; ok && sent.Add(e.lease).After(e.until) {
			e.until = sent.Add(e.lease)
			b.known[id] = e
		}
	}
	live := make(map[string]bool, len(running))
	for _, id := range running {
		live[id] = true
	}
	now := b.clock.Now()
	for id, e := range b.known {
		if !live[id] && now.Sub(e.until) > e.lease {
			delete(b.known, id)
		}
	}
	close(b.renewal)
	b.renewal = make(chan struct{})
}

// nudgeHeartbeat asks the heartbeat loop for a heartbeat now.
func (b *leaseBook) nudgeHeartbeat() {
	select {
	case b.nudge <- struct{}{}:
	default:
	}
}

// errLeaseStopped: the attempt was stopped while it waited for its lease.
var errLeaseStopped = errors.New("stopped while waiting for its lease to be renewed")

// Hold implements runner.Leases: it returns nil once attemptID's lease is
// known to hold for at least half its length from now, asking the
// heartbeat loop for a heartbeat (which renews it) if it is not; an
// attempt it was never told of holds. It fails when stop is closed (the
// attempt was cancelled, perhaps by that very heartbeat) or ctx ends.
func (b *leaseBook) Hold(ctx context.Context, attemptID string, stop <-chan struct{}) error {
	for {
		select {
		case <-stop:
			return errLeaseStopped
		default:
		}
		b.mu.Lock()
		e, ok := b.known[attemptID]
		renewal := b.renewal
		b.mu.Unlock()
		if !ok || e.until.Sub(b.clock.Now()) >= e.lease/2 {
			return nil
		}
		select {
		case b.nudge <- struct{}{}:
		default:
		}
		select {
		case <-renewal:
		case <-stop:
			return errLeaseStopped
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
