package state

// ArtifactBytesBy is how many bytes of recorded artifacts were first
// uploaded under the credential name by: what its artifact quota counts.
// An artifact counts once, for whoever uploaded it first; uploading a
// digest that is already recorded adds nothing. Collected artifacts stop
// counting.
func (s *Store) ArtifactBytesBy(by string) int64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var n int64
	for _, a := range s.artifacts {
		if a.UploadedBy == by {
			n += a.Size
		}
	}
	return n
}
