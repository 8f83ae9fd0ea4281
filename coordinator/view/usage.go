package view

import (
	"cmp"
	"slices"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/coordinator/state/usage"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// centiMillisPerGPUSecond turns hundredths of a GPU times milliseconds
// into GPU-seconds.
const centiMillisPerGPUSecond = command.CentiGPUsPerGPU * 1000

// UsageRows sums the usage table's rows by team and the dimension asked
// for (team, gpu_model or user), of the teams a caller may see (seen).
func UsageRows(rows []usage.Row, groupBy string, seen func(team string) bool) []api.UsageRow {
	type key struct{ team, model, user string }
	sums := map[key]*api.UsageRow{}
	var order []key
	for _, r := range rows {
		if !seen(r.Key.Team) {
			continue
		}
		k := key{team: r.Key.Team}
		switch groupBy {
		case api.UsageByGPUModel:
			k.model = r.Key.Model
		case api.UsageByUser:
			k.user = r.Key.User
		}
		s, ok := sums[k]
		if !ok {
			s = &api.UsageRow{Team: k.team, GPUModel: k.model, User: k.user}
			sums[k] = s
			order = append(order, k)
		}
		s.GPUSeconds += float64(r.CentiGPUMillis) / centiMillisPerGPUSecond
		s.PreemptedGPUSeconds += float64(r.PreemptCentiMillis) / centiMillisPerGPUSecond
		s.Tasks += r.Attempts
	}
	slices.SortFunc(order, func(a, b key) int {
		return cmp.Or(cmp.Compare(a.team, b.team), cmp.Compare(a.model, b.model), cmp.Compare(a.user, b.user))
	})
	out := make([]api.UsageRow, len(order))
	for i, k := range order {
		out[i] = *sums[k]
	}
	return out
}

// JobUsageRows renders the retained jobs' GPU time, one row a job.
func JobUsageRows(jobs []state.JobUsage) []api.UsageRow {
	out := make([]api.UsageRow, len(jobs))
	for i, j := range jobs {
		out[i] = api.UsageRow{
			Team: j.Team, User: j.User, JobID: j.JobID, Tasks: j.Tasks,
			GPUSeconds:          float64(j.CentiGPUMillis) / centiMillisPerGPUSecond,
			PreemptedGPUSeconds: float64(j.PreemptMillis) / centiMillisPerGPUSecond,
		}
	}
	return out
}
