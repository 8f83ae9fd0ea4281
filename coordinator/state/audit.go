package state

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// MaxAuditEvents is how many audit events the state keeps. The log is
// append-only: events are never edited, and the oldest are dropped once
// there are more than this, so a flood of events cannot grow the state
// without bound. Operators who must keep everything export it with
// `gpulayer audit` on a schedule.
const MaxAuditEvents = 100_000

// MaxAuditBatch bounds the events one AppendAudit may carry.
const MaxAuditBatch = 1024

// record appends one event, assigning its sequence number. It is called
// inside Apply, so events are ordered and numbered identically on every
// replica.
func (s *Store) record(ev command.AuditEvent) {
	s.auditSeq++
	ev.Seq = s.auditSeq
	s.audit = append(s.audit, ev)
	if len(s.audit) > MaxAuditEvents+MaxAuditEvents/8 {
		// Trim in steps, so the copy is amortised.
		s.audit = append([]command.AuditEvent(nil), s.audit[len(s.audit)-MaxAuditEvents:]...)
	}
}

func (s *Store) appendAudit(c command.AppendAudit) Result {
	if len(c.Events) > MaxAuditBatch {
		return Result{Err: fmt.Errorf("%w: an audit batch carries at most %d events", ErrInvalid, MaxAuditBatch)}
	}
	for _, ev := range c.Events {
		ev.Seq = 0
		s.record(ev)
	}
	return Result{Value: len(c.Events)}
}

// AuditFilter selects audit events. Zero fields select everything.
type AuditFilter struct {
	Since, Until time.Time
	// Kinds match an event kind exactly, or as its area: "token" matches
	// token.created and token.revoked.
	Kinds []string
	// After skips events with a sequence number at or below it (paging).
	After uint64
	Limit int
}

func (f AuditFilter) matches(ev *command.AuditEvent) bool {
	if ev.Seq <= f.After {
		return false
	}
	if !f.Since.IsZero() && ev.Time.Before(f.Since) {
		return false
	}
	if !f.Until.IsZero() && !ev.Time.Before(f.Until) {
		return false
	}
	if len(f.Kinds) == 0 {
		return true
	}
	for _, k := range f.Kinds {
		if ev.Kind == k || strings.HasPrefix(ev.Kind, k+".") {
			return true
		}
	}
	return false
}

// Audit returns the events f selects, oldest first, at most f.Limit.
func (s *Store) Audit(f AuditFilter) []api.AuditEvent {
	s.mu.RLock()
	defer s.mu.RUnlock()
	start := sort.Search(len(s.audit), func(i int) bool { return s.audit[i].Seq > f.After })
	out := []api.AuditEvent{}
	for i := start; i < len(s.audit); i++ {
		ev := &s.audit[i]
		if !f.matches(ev) {
			continue
		}
		out = append(out, api.AuditEvent{
			Seq: ev.Seq, Time: api.FormatTime(ev.Time), Kind: ev.Kind, Actor: ev.Actor,
			CredentialID: ev.CredentialID, CredentialKind: ev.CredentialKind, WorkerID: ev.WorkerID,
			Subject: ev.Subject, Source: ev.Source, Route: ev.Route, Code: ev.Code, Detail: ev.Detail, Count: ev.Count,
		})
		if f.Limit > 0 && len(out) == f.Limit {
			break
		}
	}
	return out
}
