package state

import (
	"fmt"
	"sort"

	"github.com/gpulayer/gpulayer/coordinator/sched/report"
)

// The fleet's GPUs and what runs on each: the read behind GET /v1/gpus
// (report.Holders, from each worker's active tasks).

// GPUHolder is a task that holds a GPU (report.GPUHolder).
type GPUHolder = report.GPUHolder

// GPUCounts are a GPU model's devices by what they can do now
// (report.CountGPUs).
type GPUCounts = report.GPUCounts

// WorkerGPUs is a worker's record with, by device UUID, the tasks that
// hold each of its devices (in task id order).
type WorkerGPUs struct {
	Worker  WorkerRecord
	Holders map[string][]GPUHolder
}

// FleetGPUs reads every worker's GPUs and their holders, by worker id;
// with a worker id, that worker's alone (ErrNotFound if unknown).
func (s *Store) FleetGPUs(workerID string) ([]WorkerGPUs, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var ws []*Worker
	if workerID != "" {
		w, ok := s.workers[workerID]
		if !ok {
			return nil, fmt.Errorf("worker %s: %w", workerID, ErrNotFound)
		}
		ws = []*Worker{w}
	} else {
		for _, w := range s.workers {
			ws = append(ws, w)
		}
		sort.Slice(ws, func(i, j int) bool { return ws[i].ID < ws[j].ID })
	}
	out := make([]WorkerGPUs, len(ws))
	for i, w := range ws {
		out[i] = WorkerGPUs{Worker: s.workerRecord(w), Holders: report.Holders(w, s.holding)}
	}
	return out, nil
}
