package api

import "encoding/json"

// Task states.
const (
	TaskPending   = "pending"
	TaskAssigned  = "assigned"
	TaskRunning   = "running"
	TaskSucceeded = "succeeded"
	TaskFailed    = "failed"
	TaskCancelled = "cancelled"
)

// Attempt states beyond the task states an attempt shares.
const (
	AttemptLost  = "lost"
	AttemptStale = "stale"
	// AttemptPreempted: the attempt was stopped because its worker was
	// drained past its deadline or stopped; it does not use up one of the
	// task's attempts.
	AttemptPreempted = "preempted"
)

// Target kinds.
const (
	TargetWorker = "worker"
	TargetGroup  = "group"
)

// Resources is what a task needs from the worker that runs it.
type Resources struct {
	GPUs              int    `json:"gpus,omitempty"`
	GPUMemoryMiB      uint64 `json:"gpu_memory_mib,omitempty"`
	GPUModel          string `json:"gpu_model,omitempty"`
	ComputeCapability string `json:"compute_capability,omitempty"`
	// MIGProfile asks for MIG devices of this profile ("1g.10gb",
	// "3g.40gb", "1c.3g.40gb"): GPUs then counts MIG devices, not whole
	// GPUs (docs/gpus.md, "MIG").
	MIGProfile string `json:"mig_profile,omitempty"`
	// GPUSharing, when set (SharingEnforced or SharingUnenforced), asks
	// for a share of one whole GPU: GPUMemoryMiB of its memory, beside
	// other shared tasks, instead of whole GPUs. GPUs must then be 1 and
	// GPUMemoryMiB above 0 (docs/gpus.md, "Fractional sharing"). Empty:
	// GPUMemoryMiB is the least memory of each GPU, which is the task's
	// alone.
	GPUSharing string `json:"gpu_sharing,omitempty"`
	// MemoryMiB and CPUs cap each task of the job on its agent: its
	// sandbox's cgroup gets a memory limit of MemoryMiB and a CPU quota of
	// CPUs (fractions allowed). Where the agent has caps of its own
	// (--task-memory-mib, --task-cpus) the tighter one holds. They are
	// limits, not reservations: placement does not count them. 0: none.
	MemoryMiB int64   `json:"memory_mib,omitempty"`
	CPUs      float64 `json:"cpus,omitempty"`
}

// Bounds of a task's own limits (Resources.MemoryMiB, CPUs).
const (
	MaxTaskMemoryMiB = 1 << 24 // 16 TiB
	MaxTaskCPUs      = 4096
)

// Target restricts a job to one worker or to the members of a group.
type Target struct {
	Kind string `json:"kind"`
	ID   string `json:"id"`
}

// JobSpec is the body of POST /v1/jobs.
type JobSpec struct {
	Name       string          `json:"name,omitempty"`
	Executor   string          `json:"executor"`
	Config     json.RawMessage `json:"config,omitempty"`
	Count      int             `json:"count,omitempty"`
	Resources  *Resources      `json:"resources,omitempty"`
	Capability string          `json:"capability,omitempty"`
	Target     *Target         `json:"target,omitempty"`
	// Affinity is a JSON array of AffinityRule (kept raw so that jobs
	// stored before its shape was fixed still decode; ParseAffinity reads
	// it). Spread spreads the job's tasks over the live workers that can
	// take them.
	Affinity json.RawMessage `json:"affinity,omitempty"`
	Spread   bool            `json:"spread,omitempty"`
	// Gang assigns the job's Count tasks (at least 2) together, in one
	// decision, or none of them; they meet through rendezvous (gang.go).
	Gang bool `json:"gang,omitempty"`
	// Preflight, on a gang job, has each rank's agent check its GPUs
	// before the rank starts (docs/gpus.md, "Preflight"): a GPU that
	// fails is marked unhealthy with the figures and the gang placed
	// again without using an attempt.
	Preflight       bool `json:"preflight,omitempty"`
	ExclusiveWorker bool `json:"exclusive_worker,omitempty"`
	MaxPerWorker    int  `json:"max_per_worker,omitempty"`
	Priority        int  `json:"priority,omitempty"`
	MaxAttempts     int  `json:"max_attempts,omitempty"`
	LeaseSeconds    int  `json:"lease_seconds,omitempty"`
	TimeoutSeconds  int  `json:"timeout_seconds,omitempty"`
	// Inputs are staged into each task's directory, verified against
	// their digest, before its process starts (ArtifactRef: a bare digest
	// is staged at inputs/<sha256>).
	Inputs []ArtifactRef `json:"inputs,omitempty"`
	// Outputs are globs (path.Match) relative to the task's directory:
	// the files they match once the process ended are uploaded and listed
	// on the task. A glob that names a directory takes the files under it.
	Outputs        []string `json:"outputs,omitempty"`
	IdempotencyKey string   `json:"idempotency_key,omitempty"`
	// Parallelism (1..Count) bounds how many of the job's tasks are
	// assigned or running at once; absent, no bound. Every task sees
	// GPULAYER_TASK_INDEX and GPULAYER_TASK_COUNT. A pointer, so that an
	// explicit 0 is refused rather than read as absent.
	Parallelism *int `json:"parallelism,omitempty"`
	// DependsOn (at most MaxDependencies) lists jobs this one waits for:
	// its tasks stay pending until each condition holds, and the job is
	// cancelled when one can no longer hold.
	DependsOn []Dependency `json:"depends_on,omitempty"`
	// Preemptible (absent: true) lets the job's tasks be taken back for a
	// team under its quota or a higher-priority task of the same team; a
	// job with false runs only within its team's quota.
	Preemptible *bool `json:"preemptible,omitempty"`
	// PreemptionGraceSeconds (0..MaxPreemptionGraceSeconds, absent:
	// DefaultPreemptionGraceSeconds) is the time between a preempted
	// attempt's SIGTERM and its kill.
	PreemptionGraceSeconds *int `json:"preemption_grace_seconds,omitempty"`
	// Checkpoint names a path inside the task directory that is uploaded
	// when an attempt ends preempted, lost with its agent alive, or
	// failed, and staged at the same path before the next attempt.
	Checkpoint *CheckpointSpec `json:"checkpoint,omitempty"`
}

// CheckpointSpec is a job's checkpoint: Path is relative to the task
// directory (the task sees it as GPULAYER_CHECKPOINT_DIR).
type CheckpointSpec struct {
	Path string `json:"path"`
}

// Preemption grace bounds, in seconds.
const (
	DefaultPreemptionGraceSeconds = 30
	MaxPreemptionGraceSeconds     = 600
)

// Dependency is one job a job waits for: Condition is DependSucceeded,
// DependFailed or DependFinished.
type Dependency struct {
	Job       string `json:"job"`
	Condition string `json:"condition"`
}

// Dependency conditions.
const (
	DependSucceeded = "succeeded"
	DependFailed    = "failed"
	DependFinished  = "finished"
)

// MaxDependencies bounds a job's DependsOn.
const MaxDependencies = 64

// ExecConfig is the config of the built-in exec executor.
type ExecConfig struct {
	Command string            `json:"command"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	Dir     string            `json:"dir,omitempty"`
}

// Attempt is one assignment of a task to a worker.
type Attempt struct {
	AttemptID  string   `json:"attempt_id"`
	Number     int      `json:"number"`
	WorkerID   string   `json:"worker_id"`
	State      string   `json:"state"`
	Devices    []string `json:"devices,omitempty"`
	AssignedAt string   `json:"assigned_at"`
	StartedAt  string   `json:"started_at,omitempty"`
	EndedAt    string   `json:"ended_at,omitempty"`
	ExitCode   *int     `json:"exit_code,omitempty"`
	Reason     string   `json:"reason,omitempty"`
	// Preflight is how the attempt's preflight went, as its agent
	// reported it; absent where none ran.
	Preflight *PreflightReport `json:"preflight,omitempty"`
}

// Task is one unit of a job as clients see it.
type Task struct {
	ID        string          `json:"id"`
	JobID     string          `json:"job_id"`
	Index     int             `json:"index"`
	State     string          `json:"state"`
	Attempt   int             `json:"attempt"`
	AttemptID string          `json:"attempt_id,omitempty"`
	WorkerID  string          `json:"worker_id,omitempty"`
	ExitCode  *int            `json:"exit_code,omitempty"`
	Output    json.RawMessage `json:"output,omitempty"`
	// Artifacts are the outputs the task's finish listed.
	Artifacts []TaskArtifact `json:"artifacts,omitempty"`
	// Checkpoint is the task's latest checkpoint, for a job with one.
	Checkpoint *TaskCheckpoint `json:"checkpoint,omitempty"`
	Reason     string          `json:"reason,omitempty"`
	// PendingReason, on a pending task that no live worker can take,
	// says what is missing: the target, an executor, a capability, GPUs.
	PendingReason   string    `json:"pending_reason,omitempty"`
	SubmittedBy     string    `json:"submitted_by,omitempty"`
	ExecutedBy      string    `json:"executed_by,omitempty"`
	Devices         []string  `json:"devices,omitempty"`
	CancelRequested bool      `json:"cancel_requested,omitempty"`
	Attempts        []Attempt `json:"attempts,omitempty"`
	CreatedAt       string    `json:"created_at"`
	UpdatedAt       string    `json:"updated_at"`
}

// Job is a submitted job as clients see it: the spec it was submitted with
// plus server fields. Its state is derived from its tasks.
type Job struct {
	JobSpec
	ID        string `json:"id"`
	State     string `json:"state"`
	CreatedBy string `json:"created_by"`
	// Team is the team the job runs for: its submitting token's.
	Team      string `json:"team"`
	CreatedAt string `json:"created_at"`
	UpdatedAt string `json:"updated_at"`
	// Reason, on a job that ended cancelled or failed, says why: its
	// tasks' reason (a dependency that can no longer hold names it).
	Reason string `json:"reason,omitempty"`
	Tasks  []Task `json:"tasks"`
}

// JobResponse wraps a job in answers to submit, get and cancel.
type JobResponse struct {
	Job Job `json:"job"`
}

// JobList answers GET /v1/jobs?limit=&after=: one page of jobs, newest
// first. Next is the opaque cursor to pass as after for the following
// page; it is empty on the last page.
type JobList struct {
	Jobs []Job  `json:"jobs"`
	Next string `json:"next"`
}

// Page sizes of GET /v1/jobs: without limit a page holds DefaultJobsPage
// jobs; limit may be 1 to MaxJobsPage.
const (
	DefaultJobsPage = 100
	MaxJobsPage     = 1000
)

// LogEntry is one chunk of task output. GET /v1/jobs/{id}/logs answers
// newline-delimited LogEntry values.
type LogEntry struct {
	TaskID  string `json:"task_id"`
	Index   int    `json:"index"`
	Attempt int    `json:"attempt"`
	Stream  string `json:"stream"`
	Seq     int64  `json:"seq"`
	Data    string `json:"data"`
	Time    string `json:"time,omitempty"`
}

// A following log stream ends with the HTTP trailer HeaderStreamEnd:
// StreamEndJobEnded once every entry of the ended job was sent, or
// StreamEndMaxLife when the stream reached the coordinator's maximum life
// first (reconnect for the rest).
const (
	HeaderStreamEnd   = "X-Gpulayer-Stream-End"
	StreamEndJobEnded = "job-ended"
	StreamEndMaxLife  = "max-life"
)

// Log streams.
const (
	StreamStdout = "stdout"
	StreamStderr = "stderr"
)
