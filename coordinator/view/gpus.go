package view

import (
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// GPUs renders the fleet's GPU view: one row per device of each worker,
// in the workers' order and then the worker's own, with the device as the
// worker's record shows it (Worker: approval, and the health of a worker
// that is offline, revoked or unapproved) and the tasks that hold it.
func GPUs(ws []state.WorkerGPUs) []api.GPU {
	out := []api.GPU{}
	for _, wg := range ws {
		w := Worker(wg.Worker)
		for _, d := range w.Devices {
			row := api.GPU{WorkerID: w.WorkerID, WorkerStatus: w.Status, Device: d, Use: api.GPUFree, Tasks: []api.GPUTask{}}
			for _, h := range wg.Holders[d.UUID] {
				row.Tasks = append(row.Tasks, api.GPUTask{TaskID: h.TaskID, JobID: h.JobID, AttemptID: h.AttemptID, ShareMiB: h.ShareMiB})
				if h.ShareMiB > 0 {
					row.SharedMiB += h.ShareMiB
					row.Use = api.GPUShared
				} else {
					row.Use = api.GPUWhole
				}
			}
			if d.MIGEnabled && len(row.Tasks) == 0 {
				row.Use = api.GPUMIG
			}
			out = append(out, row)
		}
	}
	return out
}
