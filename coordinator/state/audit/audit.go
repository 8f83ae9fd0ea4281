// Package audit is the audit log's room: two bounded rings of events
// that share one sequence, filled inside Apply (so every replica numbers
// them alike) and read with a filter. It knows no other room but the
// state's value types (coordinator/command).
package audit

import (
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
	MaxEvents   = 100_000
	MaxRefusals = 10_000
)

// MaxBatch bounds the events one AppendAudit may carry.
const MaxBatch = 1024

// isRefusal reports whether an event kind is a refusal (auth.refused,
// enrollment.refused, ...), kept in the refusal ring.
func isRefusal(kind string) bool { return strings.HasSuffix(kind, ".refused") }

// Log is the two rings and their sequence. Its zero value is an empty
// log. It follows its owner's locking: Record and RecordRefusal under
// the write lock (inside Apply), the rest under the read lock.
type Log struct {
	events, refusals []command.AuditEvent
	seq              uint64
}

// Record appends one event to its kind's ring, assigning its sequence
// number. It is called inside Apply, so events are ordered and numbered
// identically on every replica.
func (l *Log) Record(ev command.AuditEvent) {
	if isRefusal(ev.Kind) {
		l.RecordRefusal(ev)
		return
	}
	l.seq++
	ev.Seq = l.seq
	l.events = appendBounded(l.events, ev, MaxEvents)
}

// RecordRefusal appends to the refusal ring whatever the event's kind.
func (l *Log) RecordRefusal(ev command.AuditEvent) {
	l.seq++
	ev.Seq = l.seq
	l.refusals = appendBounded(l.refusals, ev, MaxRefusals)
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

// Restore rebuilds the log from a snapshot's rings and sequence: each
// ring sorted by sequence. A snapshot written before there were two rings
// holds every event in main; its refusals move to their ring. Nothing is
// trimmed here (the next append does, at the same length on every
// replica), so a restored replica holds exactly what the snapshotted one
// did.
func Restore(main, refusals []command.AuditEvent, seq uint64) Log {
	keep, refused := split(main, refusals)
	return Log{events: keep, refusals: refused, seq: seq}
}

func split(main, refusals []command.AuditEvent) (keep, refused []command.AuditEvent) {
	for _, ev := range main {
		if isRefusal(ev.Kind) {
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

// Filter selects audit events. Zero fields select everything.
type Filter struct {
	Since, Until time.Time
	// Kinds match an event kind exactly, or as its area: "token" matches
	// token.created and token.revoked.
	Kinds []string
	// After skips events with a sequence number at or below it (paging).
	After uint64
	Limit int
}

func (f Filter) matches(ev *command.AuditEvent) bool {
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

// Select returns the events f selects from both rings, oldest first (by
// sequence), at most f.Limit.
func (l *Log) Select(f Filter) []command.AuditEvent {
	a, b := l.events, l.refusals
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

// Frozen returns both rings and the sequence as they stand, for a
// snapshot's capture: appends after it never reach the slices it holds
// (their capacity is cut to their length).
func (l *Log) Frozen() (events, refusals []command.AuditEvent, seq uint64) {
	return l.events[:len(l.events):len(l.events)], l.refusals[:len(l.refusals):len(l.refusals)], l.seq
}
