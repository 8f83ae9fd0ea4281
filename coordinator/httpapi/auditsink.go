package httpapi

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/internal/clock"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// Refused authentications (and enrollments refused before they reach the
// state machine) are audited, but a refusal must not cost a Raft write,
// or anyone could turn garbage requests into replicated writes. The sink
// coalesces them: refusals with the same kind, source, route and code
// within one flush interval become one event with a count, and at most
// maxDistinctRefusals distinct ones are kept per interval; the rest are
// folded into one overflow event. Each flush is one AppendAudit command,
// so refusals cost at most one Raft entry per interval, whatever the load.
//
// What the caller chose freely (the credential id of a token that did not
// authenticate, the external worker key of a refused enrollment) is not
// part of the key: random ids from one source collapse into one summary
// per interval, which names the first few ids and counts them. A
// credential that did authenticate (and was then refused, say for its
// role) keeps its own event, since its id is genuine. The state machine
// keeps these events in a ring of their own (audit.MaxRefusals), so
// however many there are they evict no other audit event.

// DefaultAuditFlush is how often coalesced refusals are written.
const DefaultAuditFlush = time.Second

// maxDistinctRefusals bounds the distinct refusals kept per interval.
const maxDistinctRefusals = 256

// maxNamedIDs bounds the caller-chosen ids a summary names.
const maxNamedIDs = 4

// maxCountedIDs bounds the distinct caller-chosen ids a summary tells
// apart; past it the summary says "at least".
const maxCountedIDs = 1024

type refusalKey struct {
	kind, source, route, code, credID, credKind, workerID, subject string
}

// pendingRefusal is one coalesced event and the caller-chosen ids folded
// into it.
type pendingRefusal struct {
	ev   command.AuditEvent
	ids  []string            // the first maxNamedIDs, in arrival order
	seen map[string]struct{} // every distinct id, up to maxCountedIDs
}

// unauthenticated reports whether the refusal's identifying fields were
// chosen by the caller rather than proven.
func unauthenticated(ev *command.AuditEvent) bool {
	return ev.Kind == "enrollment.refused" || ev.Code == string(api.CodeUnauthenticated)
}

// keyOf is the coalescing key; for an unauthenticated refusal it leaves
// out what the caller chose.
func keyOf(ev *command.AuditEvent) (refusalKey, string) {
	k := refusalKey{ev.Kind, ev.Source, ev.Route, ev.Code, ev.CredentialID, ev.CredentialKind, ev.WorkerID, ev.Subject}
	if !unauthenticated(ev) {
		return k, ""
	}
	id := ev.CredentialID
	if ev.Kind == "enrollment.refused" {
		id = ev.Subject
	}
	k.credID, k.workerID, k.subject = "", "", ""
	return k, id
}

// fold adds one more caller-chosen id to a summary.
func (p *pendingRefusal) fold(id string) {
	if id == "" || len(p.seen) >= maxCountedIDs {
		return
	}
	if _, dup := p.seen[id]; dup {
		return
	}
	if p.seen == nil {
		p.seen = map[string]struct{}{}
	}
	p.seen[id] = struct{}{}
	if len(p.ids) < maxNamedIDs {
		p.ids = append(p.ids, id)
	}
}

// event is the summary as written: with several ids, none stands in the
// id fields and the detail names the first few.
func (p *pendingRefusal) event() command.AuditEvent {
	ev := p.ev
	distinct := len(p.seen)
	if distinct <= 1 {
		return ev
	}
	ev.CredentialID, ev.WorkerID, ev.Actor = "", "", ""
	if ev.Kind == "enrollment.refused" {
		ev.Subject = ""
	}
	more := ""
	if distinct > len(p.ids) {
		more = ", ..."
	}
	count := strconv.Itoa(distinct)
	if distinct >= maxCountedIDs {
		count = "at least " + count
	}
	names := fmt.Sprintf("%s distinct ids presented: %s%s", count, strings.Join(p.ids, ", "), more)
	if ev.Detail != "" {
		names = ev.Detail + "; " + names
	}
	ev.Detail = names
	return ev
}

type auditSink struct {
	propose state.Proposer
	clock   clock.Clock
	log     *slog.Logger
	every   time.Duration

	mu       sync.Mutex
	pending  map[refusalKey]*pendingRefusal
	order    []refusalKey
	overflow int
	firstOut time.Time
}

func newAuditSink(p state.Proposer, clk clock.Clock, log *slog.Logger, every time.Duration) *auditSink {
	if every <= 0 {
		every = DefaultAuditFlush
	}
	return &auditSink{propose: p, clock: clk, log: log, every: every, pending: map[refusalKey]*pendingRefusal{}}
}

// add counts one refusal.
func (a *auditSink) add(ev command.AuditEvent) {
	k, id := keyOf(&ev)
	a.mu.Lock()
	defer a.mu.Unlock()
	if p, ok := a.pending[k]; ok {
		p.ev.Count++
		p.fold(id)
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
	p := &pendingRefusal{ev: ev}
	p.fold(id)
	a.pending[k] = p
	a.order = append(a.order, k)
}

// take empties the sink and returns its events in the order first seen.
func (a *auditSink) take() []command.AuditEvent {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]command.AuditEvent, 0, len(a.order)+1)
	for _, k := range a.order {
		out = append(out, a.pending[k].event())
	}
	if a.overflow > 0 {
		out = append(out, command.AuditEvent{Time: a.firstOut, Kind: "auth.refused", Detail: "refusals beyond the distinct sources, routes and credentials kept per interval", Count: a.overflow})
	}
	a.pending = map[refusalKey]*pendingRefusal{}
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
	if _, err := state.Propose[int](ctx, a.propose, command.AppendAudit{Events: evs}); err != nil {
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
