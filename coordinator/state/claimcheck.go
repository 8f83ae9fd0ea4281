package state

// CheckClaim answers, from the local replica and without writing, the
// refusal a task write by workerID under attemptID would get: not found,
// wrong claimant, not claimed or stale attempt; nil when the write would
// be decided on its merits. A refusal found here is final: tasks are never
// forgotten while a worker may still hold them, and an attempt that ended
// never becomes current again, so the HTTP layer may answer it without
// proposing. A nil answer is not a promise: the state machine decides
// again, atomically with the write.
func (s *Store) CheckClaim(taskID, workerID, attemptID string) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, err := s.claim(taskID, workerID, attemptID)
	return err
}
