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
	// Quota is guaranteed to the team; BorrowLimit is how far past it
	// the team may borrow idle GPUs (absent: without bound).
	Quota       GPUAmount  `json:"quota"`
	BorrowLimit *GPUAmount `json:"borrow_limit,omitempty"`
	Usage       TeamUsage  `json:"usage"`
	CreatedAt   string     `json:"created_at,omitempty"`
	CreatedBy   string     `json:"created_by,omitempty"`
	UpdatedAt   string     `json:"updated_at,omitempty"`
	UpdatedBy   string     `json:"updated_by,omitempty"`
}

// TeamUsage is what a team runs and waits for now.
type TeamUsage struct {
	GPUsInUse    float64 `json:"gpus_in_use"`
	RunningTasks int     `json:"running_tasks"`
	PendingTasks int     `json:"pending_tasks"`
}

// CreateTeamRequest is the body of POST /v1/teams.
type CreateTeamRequest struct {
	Name        string     `json:"name"`
	Weight      *float64   `json:"weight,omitempty"`
	Quota       *GPUAmount `json:"quota,omitempty"`
	BorrowLimit *GPUAmount `json:"borrow_limit,omitempty"`
}

// UpdateTeamRequest is the body of PATCH /v1/teams/{name}: the fields it
// holds change, the others stay. ClearBorrowLimit, or a borrow_limit of
// null, lifts the borrow limit.
type UpdateTeamRequest struct {
	Weight           *float64   `json:"weight,omitempty"`
	Quota            *GPUAmount `json:"quota,omitempty"`
	BorrowLimit      *GPUAmount `json:"borrow_limit,omitempty"`
	ClearBorrowLimit bool       `json:"clear_borrow_limit,omitempty"`
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
