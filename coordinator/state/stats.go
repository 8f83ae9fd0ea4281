package state

import "github.com/gpulayer/gpulayer/coordinator/sched/report"

// Stats are counts for metrics.
type Stats struct {
	Jobs            int
	Workers         int
	WorkersByStatus map[string]int
	TasksByState    map[string]int
	Pending         int
	// PendingByExecutor is the queue depth of each executor: pending
	// tasks, whatever their target and capability; an executor some worker
	// advertises is there even at zero.
	PendingByExecutor map[string]int
	// LeasesHeld counts tasks assigned to or running on a worker, each
	// under a lease.
	LeasesHeld int
	// GPUs counts the workers' GPUs by model (report.CountGPUs); a model some
	// worker has shows even when all its counts are zero.
	GPUs map[string]GPUCounts
}

// Stats counts what the store holds. It walks the tasks once, under the
// read lock; metrics call it on each scrape, never on a write.
func (s *Store) Stats() Stats {
	s.mu.RLock()
	defer s.mu.RUnlock()
	st := Stats{
		Jobs:              s.jobs.Len(),
		Workers:           len(s.workers),
		WorkersByStatus:   map[string]int{},
		TasksByState:      map[string]int{},
		Pending:           s.queue.Len(),
		PendingByExecutor: map[string]int{},
		GPUs:              map[string]GPUCounts{},
	}
	for _, w := range s.workers {
		st.WorkersByStatus[w.Status]++
		report.CountGPUs(w, s.holding, st.GPUs)
		for _, e := range w.Executors {
			if _, ok := st.PendingByExecutor[e]; !ok {
				st.PendingByExecutor[e] = 0 // an executor some worker runs shows, at zero
			}
		}
	}
	for _, t := range s.tasks.All() {
		st.TasksByState[t.State]++
		if t.Active() {
			st.LeasesHeld++
		}
	}
	for rk, sq := range s.queue.All() {
		st.PendingByExecutor[rk.Executor] += len(sq.Tasks)
	}
	return st
}
