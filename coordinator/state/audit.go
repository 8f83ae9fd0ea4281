package state

import (
	"fmt"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/audit"
)

// appendAudit records events the HTTP layer coalesced: refused requests
// that never reached the state machine otherwise. They all go to the
// refusal ring, whatever kind they claim.
func (s *Store) appendAudit(c command.AppendAudit) (int, error) {
	if len(c.Events) > audit.MaxBatch {
		return 0, fmt.Errorf("%w: an audit batch carries at most %d events", ErrInvalid, audit.MaxBatch)
	}
	for _, ev := range c.Events {
		ev.Seq = 0
		s.audit.RecordRefusal(ev)
	}
	return len(c.Events), nil
}

// Audit returns the events f selects from both rings, oldest first (by
// sequence), at most f.Limit.
func (s *Store) Audit(f audit.Filter) []command.AuditEvent {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.audit.Select(f)
}
