package httpapi

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/internal/clock"
)

// Refused authentications (and enrollments refused before they reach the
// state machine) are audited, but a refusal must not cost a Raft write,
// or anyone could turn garbage requests into replicated writes. The sink
// coalesces them: refusals with the same kind, source, route, code and
// credential within one flush interval become one event with a count, and
// at most maxDistinctRefusals distinct ones are kept per interval; the
// rest are folded into one overflow event. Each flush is one AppendAudit
// command, so refusals cost at most one Raft entry per interval, whatever
// the load.

// DefaultAuditFlush is how often coalesced refusals are written.
const DefaultAuditFlush = time.Second

// maxDistinctRefusals bounds the distinct refusals kept per interval.
const maxDistinctRefusals = 256

type refusalKey struct {
	kind, source, route, code, credID, credKind, workerID, subject string
}

type auditSink struct {
	propose Proposer
	clock   clock.Clock
	log     *slog.Logger
	every   time.Duration

	mu       sync.Mutex
	pending  map[refusalKey]*command.AuditEvent
	order    []refusalKey
	overflow int
	firstOut time.Time
}

func newAuditSink(p Proposer, clk clock.Clock, log *slog.Logger, every time.Duration) *auditSink {
	if every <= 0 {
		every = DefaultAuditFlush
	}
	return &auditSink{propose: p, clock: clk, log: log, every: every, pending: map[refusalKey]*command.AuditEvent{}}
}

// add counts one refusal.
func (a *auditSink) add(ev command.AuditEvent) {
	k := refusalKey{ev.Kind, ev.Source, ev.Route, ev.Code, ev.CredentialID, ev.CredentialKind, ev.WorkerID, ev.Subject}
	a.mu.Lock()
	defer a.mu.Unlock()
	if p, ok := a.pending[k]; ok {
		p.Count++
		return
	}
	if len(a.pending) >= maxDistinctRefusals {
		if a.overflow == 0 {
			a.firstOut = ev.Time
		}
		a.overflow++
		return
	}
	ev.Count = 1
	a.pending[k] = &ev
	a.order = append(a.order, k)
}

// take empties the sink and returns its events in the order first seen.
func (a *auditSink) take() []command.AuditEvent {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]command.AuditEvent, 0, len(a.order)+1)
	for _, k := range a.order {
		out = append(out, *a.pending[k])
	}
	if a.overflow > 0 {
		out = append(out, command.AuditEvent{Time: a.firstOut, Kind: "auth.refused", Detail: "refusals beyond the distinct sources, routes and credentials kept per interval", Count: a.overflow})
	}
	a.pending = map[refusalKey]*command.AuditEvent{}
	a.order = nil
	a.overflow = 0
	return out
}

// flush writes what the sink holds as one command.
func (a *auditSink) flush(ctx context.Context) {
	evs := a.take()
	if len(evs) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	res, err := a.propose(ctx, command.AppendAudit{Events: evs})
	if err == nil {
		err = res.Err
	}
	if err != nil {
		// Refusals are seen where authentication runs, which is the
		// leader; a node that lost leadership meanwhile drops them.
		a.log.Warn("audit events of refused requests dropped", "events", len(evs), "error", err)
	}
}

// run flushes every interval until ctx ends, then once more.
func (a *auditSink) run(ctx context.Context) {
	t := a.clock.NewTicker(a.every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			a.flush(context.WithoutCancel(ctx))
			return
		case <-t.C():
			a.flush(ctx)
		}
	}
}
