package state

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
)

// The audit log is append-only: events are never edited. It is kept in
// two bounded rings that share one sequence:
//
//   - refusals (every "*.refused" kind, and whatever the HTTP layer's
//     coalescing sink appends) keep the newest MaxRefusalEvents;
//   - everything else (credentials, enrollments, approvals, groups, jobs
//     cancelled, artifacts) keeps the newest MaxAuditEvents.
//
// Refusals are what anyone can cause without a credential, so a flood of
// them evicts only older refusals, never the record of what credentialed
// callers did. Which ring an event joins depends only on the command, so
// every replica decides the same. Operators who must keep everything
// export it with `gpulayer audit` on a schedule.
const (
	MaxAuditEvents   = 100_000
	MaxRefusalEvents = 10_000
)

// MaxAuditBatch bounds the events one AppendAudit may carry.
const MaxAuditBatch = 1024

// IsRefusalKind reports whether an event kind is a refusal (auth.refused,
// enrollment.refused, ...), kept in the refusal ring.
func IsRefusalKind(kind string) bool { return strings.HasSuffix(kind, ".refused") }

// record appends one event of the kind's ring, assigning its sequence
// number. It is called inside Apply, so events are ordered and numbered
// identically on every replica.
func (s *Store) record(ev command.AuditEvent) {
	if IsRefusalKind(ev.Kind) {
		s.recordRefusal(ev)
		return
	}
	s.auditSeq++
	ev.Seq = s.auditSeq
	s.audit = appendBounded(s.audit, ev, MaxAuditEvents)
}

// recordRefusal appends to the refusal ring whatever the event's kind.
func (s *Store) recordRefusal(ev command.AuditEvent) {
	s.auditSeq++
	ev.Seq = s.auditSeq
	s.refusals = appendBounded(s.refusals, ev, MaxRefusalEvents)
}

// appendBounded appends ev and, past limit plus an eighth, drops the
// oldest down to limit (in steps, so the copy is amortised).
func appendBounded(ring []command.AuditEvent, ev command.AuditEvent, limit int) []command.AuditEvent {
	ring = append(ring, ev)
	if len(ring) > limit+limit/8 {
		ring = append([]command.AuditEvent(nil), ring[len(ring)-limit:]...)
	}
	return ring
}

// appendAudit records events the HTTP layer coalesced: refused requests
// that never reached the state machine otherwise. They all go to the
// refusal ring, whatever kind they claim.
func (s *Store) appendAudit(c command.AppendAudit) (int, error) {
	if len(c.Events) > MaxAuditBatch {
		return 0, fmt.Errorf("%w: an audit batch carries at most %d events", ErrInvalid, MaxAuditBatch)
	}
	for _, ev := range c.Events {
		ev.Seq = 0
		s.recordRefusal(ev)
	}
	return len(c.Events), nil
}

// splitAudit rebuilds both rings from a snapshot: each ring sorted by
// sequence. A snapshot written before there were two rings holds every
// event in main; its refusals move to their ring. Nothing is trimmed here
// (the next append does, at the same length on every replica), so a
// restored replica holds exactly what the snapshotted one did.
func splitAudit(main, refusals []command.AuditEvent) (keep, refused []command.AuditEvent) {
	for _, ev := range main {
		if IsRefusalKind(ev.Kind) {
			refused = append(refused, ev)
		} else {
			keep = append(keep, ev)
		}
	}
	refused = append(refused, refusals...)
	bySeq := func(evs []command.AuditEvent) []command.AuditEvent {
		sort.SliceStable(evs, func(i, j int) bool { return evs[i].Seq < evs[j].Seq })
		return evs
	}
	return bySeq(keep), bySeq(refused)
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

// Audit returns the events f selects from both rings, oldest first (by
// sequence), at most f.Limit.
func (s *Store) Audit(f AuditFilter) []command.AuditEvent {
	s.mu.RLock()
	defer s.mu.RUnlock()
	a, b := s.audit, s.refusals
	i := sort.Search(len(a), func(k int) bool { return a[k].Seq > f.After })
	j := sort.Search(len(b), func(k int) bool { return b[k].Seq > f.After })
	out := []command.AuditEvent{}
	for i < len(a) || j < len(b) {
		var ev *command.AuditEvent
		if j >= len(b) || (i < len(a) && a[i].Seq < b[j].Seq) {
			ev, i = &a[i], i+1
		} else {
			ev, j = &b[j], j+1
		}
		if !f.matches(ev) {
			continue
		}
		out = append(out, *ev)
		if f.Limit > 0 && len(out) == f.Limit {
			break
		}
	}
	return out
}

// AuditSizes reports how many events each ring holds now.
func (s *Store) AuditSizes() (events, refusals int) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.audit), len(s.refusals)
}
