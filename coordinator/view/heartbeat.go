package view

import (
	"time"

	"github.com/gpulayer/gpulayer/coordinator/heartbeat"
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// HeartbeatAnswer renders a heartbeat's answer: the worker's status after
// the beat becomes the command its agent obeys, interval the heartbeat
// interval the worker is told to keep.
func HeartbeatAnswer(a heartbeat.Answer, interval time.Duration) api.HeartbeatResponse {
	cmd := api.CommandNone
	switch a.Status {
	case state.WorkerDraining:
		cmd = api.CommandDrain
	case state.WorkerStopping:
		cmd = api.CommandStop
	}
	return api.HeartbeatResponse{
		ClearGPUs:       a.ClearGPUs,
		CancelTaskIDs:   a.Cancel,
		PreemptTaskIDs:  a.Preempt,
		LeaseExpiresAt:  api.FormatTime(a.LeaseExpiresAt),
		Command:         cmd,
		IntervalSeconds: interval.Seconds(),
		MIGLayouts:      migOrders(a.MIGLayouts),
	}
}

// migOrders are the MIG layouts the agent is to apply.
func migOrders(pending []state.MIGLayout) []api.MIGLayoutOrder {
	var out []api.MIGLayoutOrder
	for _, m := range pending {
		out = append(out, api.MIGLayoutOrder{UUID: m.UUID, Layout: nonNil(m.Layout), Generation: m.Generation})
	}
	return out
}
