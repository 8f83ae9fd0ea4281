package state

// LogChunkCheck is what the local replica says of a log chunk before it
// is proposed (see CheckLogChunk).
type LogChunkCheck struct {
	// Duplicate: the current attempt has had a chunk with this seq or a
	// later one; the state machine would ignore it.
	Duplicate bool
	// Room is how many more bytes the task's log keeps (0: it is full, or
	// the coordinators' total output bound cut it).
	Room int
}

// CheckLogChunk answers, from the local replica and without writing, the
// claim refusal the write would get, and otherwise whether a chunk with
// seq would be ignored and how much room the task's log has left. Both
// are final for the attempt: its last seq only grows until another
// attempt starts (which the claim refuses), and a task's stored log bytes
// only grow, so the HTTP layer may answer a duplicate or a chunk past the
// cap without proposing, and trim a chunk that crosses the cap.
func (s *Store) CheckLogChunk(taskID, workerID, attemptID string, seq int64) (LogChunkCheck, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	t, err := s.claim(taskID, workerID, attemptID)
	if err != nil {
		return LogChunkCheck{}, err
	}
	room := MaxLogBytesPerTask - t.LogBytes
	if t.LogCut || room < 0 {
		room = 0
	}
	return LogChunkCheck{Duplicate: seq <= t.LastLogSeq, Room: room}, nil
}
