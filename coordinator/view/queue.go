package view

import (
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// Queue renders the scheduler's order (GET /v1/queue).
func Queue(qs []state.TeamQueue) api.QueueResponse {
	out := api.QueueResponse{Teams: make([]api.QueueTeam, 0, len(qs))}
	for _, q := range qs {
		t := api.QueueTeam{
			Team:      q.Team,
			GPUsInUse: units(q.CentiGPUsInUse),
			Weight:    units(q.WeightCenti),
			Share:     float64(q.CentiGPUsInUse) / float64(q.WeightCenti),
			Quota:     api.GPUAmount{GPUs: units(q.QuotaCentiGPUs)},
			Queued:    q.Queued,
			Tasks:     make([]api.QueueTask, 0, len(q.Tasks)),
		}
		if q.CeilingCentiGPUs >= 0 {
			t.BorrowLimit = &api.GPUAmount{GPUs: units(q.CeilingCentiGPUs - q.QuotaCentiGPUs)}
		}
		for i, k := range q.Tasks {
			t.Tasks = append(t.Tasks, api.QueueTask{Position: i + 1, TaskID: k.TaskID, JobID: k.JobID, Priority: k.Priority,
				GPUs: units(k.CentiGPUs), Gang: k.Gang, Reason: k.Reason})
		}
		out.Teams = append(out.Teams, t)
	}
	return out
}
