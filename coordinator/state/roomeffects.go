package state

import (
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/fleetctl"
	"github.com/gpulayer/gpulayer/coordinator/state/gpuops"
)

// roomEffects applies to the store what a room's operation causes
// besides its records: audit events, and room for placement.
type roomEffects struct{ s *Store }

func (e roomEffects) Audit(ev command.AuditEvent) { e.s.audit.Record(ev) }
func (e roomEffects) MarkPending()                { e.s.markPending() }

// PreemptAll stops every task w holds (fleetctl's drains and stops).
func (e roomEffects) PreemptAll(w *Worker, reason string, now time.Time) string {
	return e.s.preemptAll(w, reason, now)
}

var (
	_ gpuops.Effects   = roomEffects{}
	_ fleetctl.Effects = roomEffects{}
)
