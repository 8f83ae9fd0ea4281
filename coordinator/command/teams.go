package command

import "time"

// DefaultTeam is the team that always exists: jobs and client tokens
// created before teams, and those created without one, belong to it.
const DefaultTeam = "default"

// TeamOf names the team of a record that may predate teams.
func TeamOf(team string) string {
	if team == "" {
		return DefaultTeam
	}
	return team
}

// GPU amounts are counted in hundredths of a GPU (the contract's GPU
// units rounded up to 1/100): integers, so every replica adds them up to
// the same figure in any order.
const CentiGPUsPerGPU = 100

// TeamSettings are the settings of a team an admin chooses: its weight in
// fair share (in hundredths: 100 is weight 1), its guaranteed quota, and
// how far past it the team may borrow (nil: without bound), and how many
// bytes of artifacts it may keep (nil: no team bound, only each
// credential's).
type TeamSettings struct {
	WeightCenti        int64  `json:"weight_centi"`
	QuotaCentiGPUs     int64  `json:"quota_centi_gpus,omitempty"`
	BorrowLimitCenti   *int64 `json:"borrow_limit_centi_gpus,omitempty"`
	ArtifactQuotaBytes *int64 `json:"artifact_quota_bytes,omitempty"`
}

// CreateTeam creates a team.
type CreateTeam struct {
	Name     string       `json:"name"`
	Settings TeamSettings `json:"settings"`
	By       string       `json:"by"`
	Now      time.Time    `json:"now"`
	Source   string       `json:"source,omitempty"`
}

// UpdateTeam changes the settings it names of a team; a nil field keeps
// the team's. ClearBorrowLimit lifts the borrow limit, and
// ClearArtifactQuota the artifact byte quota.
type UpdateTeam struct {
	Name               string    `json:"name"`
	WeightCenti        *int64    `json:"weight_centi,omitempty"`
	QuotaCentiGPUs     *int64    `json:"quota_centi_gpus,omitempty"`
	BorrowLimitCenti   *int64    `json:"borrow_limit_centi_gpus,omitempty"`
	ClearBorrowLimit   bool      `json:"clear_borrow_limit,omitempty"`
	ArtifactQuotaBytes *int64    `json:"artifact_quota_bytes,omitempty"`
	ClearArtifactQuota bool      `json:"clear_artifact_quota,omitempty"`
	By                 string    `json:"by"`
	Now                time.Time `json:"now"`
	Source             string    `json:"source,omitempty"`
}

// DeleteTeam deletes a team that has no unfinished job, and revokes its
// client tokens in the same write.
type DeleteTeam struct {
	Name   string    `json:"name"`
	By     string    `json:"by"`
	Now    time.Time `json:"now"`
	Source string    `json:"source,omitempty"`
}

func (CreateTeam) Type() Type { return TypeCreateTeam }
func (UpdateTeam) Type() Type { return TypeUpdateTeam }
func (DeleteTeam) Type() Type { return TypeDeleteTeam }
