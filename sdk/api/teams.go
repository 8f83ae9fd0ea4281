package api

// DefaultTeam is the team that always exists: client tokens and jobs
// created without a team, and every one created before teams, are its.
const DefaultTeam = "default"

// GPUAmount is an amount of GPUs in GPU units: a whole GPU is 1, a MIG
// instance or a memory share its fraction of its GPU's memory; figures
// are kept to 1/100.
type GPUAmount struct {
	GPUs float64 `json:"gpus"`
}

// Team is a team's record: its settings and its live figures.
type Team struct {
	Name string `json:"name"`
	// Weight is the team's share in fair share among teams that want
	// more than their quota (default 1).
	Weight float64 `json:"weight"`
	// Quota is guaranteed to the team (its GPUs) and bounds it (its
	// artifact bytes); BorrowLimit is how far past it the team may
	// borrow idle GPUs (absent: without bound).
	Quota       TeamQuota  `json:"quota"`
	BorrowLimit *GPUAmount `json:"borrow_limit,omitempty"`
	Usage       TeamUsage  `json:"usage"`
	CreatedAt   string     `json:"created_at,omitempty"`
	CreatedBy   string     `json:"created_by,omitempty"`
	UpdatedAt   string     `json:"updated_at,omitempty"`
	UpdatedBy   string     `json:"updated_by,omitempty"`
}

// TeamQuota is a team's quota: GPUs guaranteed, and the bytes of
// artifacts its credentials and its jobs' tasks may keep (absent: no
// bound but each credential's).
type TeamQuota struct {
	GPUs          float64 `json:"gpus"`
	ArtifactBytes *int64  `json:"artifact_bytes,omitempty"`
}

// TeamQuotaRequest sets a team's quota: a field absent keeps the team's
// (creating one: none). PATCH with "artifact_bytes": null lifts the
// artifact quota.
type TeamQuotaRequest struct {
	GPUs          *float64 `json:"gpus,omitempty"`
	ArtifactBytes *int64   `json:"artifact_bytes,omitempty"`
}

// QuotaGPUs is a TeamQuotaRequest that sets the GPUs only.
func QuotaGPUs(gpus float64) *TeamQuotaRequest { return &TeamQuotaRequest{GPUs: &gpus} }

// TeamUsage is what a team runs and waits for now, and the bytes of
// artifacts its artifact quota counts.
type TeamUsage struct {
	GPUsInUse     float64 `json:"gpus_in_use"`
	RunningTasks  int     `json:"running_tasks"`
	PendingTasks  int     `json:"pending_tasks"`
	ArtifactBytes int64   `json:"artifact_bytes"`
}

// CreateTeamRequest is the body of POST /v1/teams.
type CreateTeamRequest struct {
	Name        string            `json:"name"`
	Weight      *float64          `json:"weight,omitempty"`
	Quota       *TeamQuotaRequest `json:"quota,omitempty"`
	BorrowLimit *GPUAmount        `json:"borrow_limit,omitempty"`
}

// UpdateTeamRequest is the body of PATCH /v1/teams/{name}: the fields it
// holds change, the others stay. ClearBorrowLimit, or a borrow_limit of
// null, lifts the borrow limit; ClearArtifactQuota, or a
// quota.artifact_bytes of null, lifts the artifact quota.
type UpdateTeamRequest struct {
	Weight             *float64          `json:"weight,omitempty"`
	Quota              *TeamQuotaRequest `json:"quota,omitempty"`
	BorrowLimit        *GPUAmount        `json:"borrow_limit,omitempty"`
	ClearBorrowLimit   bool              `json:"clear_borrow_limit,omitempty"`
	ClearArtifactQuota bool              `json:"clear_artifact_quota,omitempty"`
}

// TeamResponse wraps one team.
type TeamResponse struct {
	Team Team `json:"team"`
}

// TeamList answers GET /v1/teams.
type TeamList struct {
	Teams []Team `json:"teams"`
}

// Team bounds: weights above 0 up to MaxTeamWeight, GPU amounts 0 to
// MaxTeamGPUs, both to 1/100.
const (
	MaxTeamWeight = 1000
	MaxTeamGPUs   = 1_000_000
)
