package state

// ArtifactBytesBy is how many bytes of recorded artifacts were first
// uploaded under the credential name by: what its artifact quota counts
// (artifacts.Table.BytesBy).
func (s *Store) ArtifactBytesBy(by string) int64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.artifacts.BytesBy(by)
}
