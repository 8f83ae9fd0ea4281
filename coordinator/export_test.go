package coordinator

import "time"

// LeaseDeadline is the leader's lease deadline of an attempt, for tests.
func (s *Server) LeaseDeadline(attemptID string) (time.Time, bool) {
	return s.leases.Deadline(attemptID)
}
