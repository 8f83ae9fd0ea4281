package api

// Usage grouping: GET /v1/usage?group_by=.
const (
	UsageByTeam     = "team"
	UsageByGPUModel = "gpu_model"
	UsageByUser     = "user"
	UsageByJob      = "job"
)

// MaxUsageRange bounds GET /v1/usage's from..to, in days.
const MaxUsageRange = 400

// UsageRow is one row of GET /v1/usage: a team's GPU time, and the
// dimension asked for. GPUSeconds counts each ended attempt from its start
// to its end, in GPU units (a MIG instance or a memory share its fraction
// of its GPU); PreemptedGPUSeconds is the part of it spent by attempts
// that ended preempted. Tasks counts, grouped by job, the job's tasks
// that used GPUs in the range, and otherwise the attempts that ended in
// it.
type UsageRow struct {
	Team                string  `json:"team"`
	GPUModel            string  `json:"gpu_model,omitempty"`
	User                string  `json:"user,omitempty"`
	JobID               string  `json:"job_id,omitempty"`
	GPUSeconds          float64 `json:"gpu_seconds"`
	PreemptedGPUSeconds float64 `json:"preempted_gpu_seconds"`
	Tasks               int     `json:"tasks"`
}

// UsageResponse answers GET /v1/usage.
type UsageResponse struct {
	From    string     `json:"from"`
	To      string     `json:"to"`
	GroupBy string     `json:"group_by"`
	Rows    []UsageRow `json:"rows"`
}
