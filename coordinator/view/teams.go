package view

import (
	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// Team renders a team with its live figures; amounts kept in hundredths
// read as GPU units.
func Team(r state.TeamRecord) api.Team {
	t := r.Team
	v := api.Team{
		Name:   t.Name,
		Weight: units(t.Settings.WeightCenti),
		Quota:  api.TeamQuota{GPUs: units(t.Settings.QuotaCentiGPUs)},
		Usage: api.TeamUsage{
			GPUsInUse:     units(r.Usage.CentiGPUsInUse),
			RunningTasks:  r.Usage.RunningTasks,
			PendingTasks:  r.Usage.PendingTasks,
			ArtifactBytes: r.Usage.ArtifactBytes,
		},
		CreatedAt: api.FormatTime(t.CreatedAt),
		CreatedBy: t.CreatedBy,
		UpdatedAt: api.FormatTime(t.UpdatedAt),
		UpdatedBy: t.UpdatedBy,
	}
	if l := t.Settings.BorrowLimitCenti; l != nil {
		v.BorrowLimit = &api.GPUAmount{GPUs: units(*l)}
	}
	if b := t.Settings.ArtifactQuotaBytes; b != nil {
		n := *b
		v.Quota.ArtifactBytes = &n
	}
	return v
}

// Teams renders a list of teams, in its order.
func Teams(rs []state.TeamRecord) []api.Team {
	return each(rs, Team)
}

func units(centi int64) float64 { return float64(centi) / command.CentiGPUsPerGPU }
