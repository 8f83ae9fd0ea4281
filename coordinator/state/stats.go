package state

// Stats are counts for metrics.
type Stats struct {
	Jobs         int
	Workers      int
	TasksByState map[string]int
	Pending      int
}

// Stats counts what the store holds.
func (s *Store) Stats() Stats {
	s.mu.RLock()
	defer s.mu.RUnlock()
	st := Stats{Jobs: len(s.jobs), Workers: len(s.workers), TasksByState: map[string]int{}, Pending: s.queue.len()}
	for _, t := range s.tasks {
		st.TasksByState[t.State]++
	}
	return st
}
