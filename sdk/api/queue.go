package api

// Queue bounds: GET /v1/queue?limit= lists at most MaxQueueLimit tasks
// per team, DefaultQueueLimit when not asked.
const (
	DefaultQueueLimit = 50
	MaxQueueLimit     = 1000
)

// QueueResponse answers GET /v1/queue: the teams with queued tasks in
// the order the scheduler serves them (lowest gpus_in_use / weight
// first), each with its first tasks in the order it takes them.
type QueueResponse struct {
	Teams []QueueTeam `json:"teams"`
}

// QueueTeam is one team's place in the order.
type QueueTeam struct {
	Team      string  `json:"team"`
	GPUsInUse float64 `json:"gpus_in_use"`
	Weight    float64 `json:"weight"`
	// Share is gpus_in_use / weight: the order's key.
	Share       float64    `json:"share"`
	Quota       GPUAmount  `json:"quota"`
	BorrowLimit *GPUAmount `json:"borrow_limit,omitempty"`
	// Queued counts the team's queued tasks; Tasks lists the first of
	// them (limit).
	Queued int         `json:"queued"`
	Tasks  []QueueTask `json:"tasks"`
}

// QueueTask is a queued task: its place in its team's order (from 1),
// what it asks for, and why it waits (empty: only for a GPU to free up).
type QueueTask struct {
	Position int     `json:"position"`
	TaskID   string  `json:"task_id"`
	JobID    string  `json:"job_id"`
	Priority int     `json:"priority"`
	GPUs     float64 `json:"gpus"`
	Gang     bool    `json:"gang,omitempty"`
	Reason   string  `json:"reason,omitempty"`
}
