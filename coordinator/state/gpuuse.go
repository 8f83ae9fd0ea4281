package state

import (
	"fmt"
	"sort"
)

// The fleet's GPUs and what runs on each: the read behind GET /v1/gpus.
// It walks each worker's active tasks (never the whole task table), so it
// costs what the fleet holds now.

// GPUHolder is a task that holds a GPU: whole, or by a memory share of
// ShareMiB.
type GPUHolder struct {
	TaskID    string
	JobID     string
	AttemptID string
	ShareMiB  uint64
}

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
		out[i] = WorkerGPUs{Worker: s.workerRecord(w), Holders: s.holders(w)}
	}
	return out, nil
}

// holders maps each of w's devices that an active task holds to those
// tasks.
func (s *Store) holders(w *Worker) map[string][]GPUHolder {
	ids := make([]string, 0, w.HeldCount())
	for id := range w.Held() {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	out := map[string][]GPUHolder{}
	for _, id := range ids {
		t := s.tasks.Get(id)
		r := s.jobs.Get(t.JobID).Spec.Resources
		var share uint64
		if r.Shared() {
			share = r.GPUMemoryMiB
		}
		for _, d := range t.Devices {
			out[d] = append(out[d], GPUHolder{TaskID: t.ID, JobID: t.JobID, AttemptID: t.AttemptID, ShareMiB: share})
		}
	}
	return out
}
