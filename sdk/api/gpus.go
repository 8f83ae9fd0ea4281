package api

// GPU use words (GPU.Use).
const (
	GPUFree   = "free"   // nothing runs on it
	GPUWhole  = "whole"  // one task holds it whole
	GPUShared = "shared" // tasks hold memory shares of it
	GPUMIG    = "mig"    // in MIG mode: given out only as its MIG devices (rows of their own)
)

// GPU is one row of the fleet's GPU view (GET /v1/gpus): a device of a
// worker, as the worker's record shows it (health, approval, MIG parent
// and profile), with what runs on it.
type GPU struct {
	WorkerID     string `json:"worker_id"`
	WorkerStatus string `json:"worker_status"`
	Device
	// Use says how the GPU is used now: free, whole, shared or mig.
	Use string `json:"use"`
	// SharedMiB sums the memory shares tasks hold of it (Use shared).
	SharedMiB uint64 `json:"shared_mib,omitempty"`
	// Tasks are the tasks that hold it, in task id order; empty if free.
	Tasks []GPUTask `json:"tasks"`
}

// GPUTask is a task that holds a GPU: whole, or by a share of ShareMiB.
type GPUTask struct {
	TaskID    string `json:"task_id"`
	JobID     string `json:"job_id"`
	AttemptID string `json:"attempt_id,omitempty"`
	ShareMiB  uint64 `json:"share_mib,omitempty"`
}

// GPUList is the answer of GET /v1/gpus.
type GPUList struct {
	GPUs []GPU `json:"gpus"`
}
