package api

// Checkpoint formats (CheckpointRef.Format).
const (
	// CheckpointFile: the checkpoint path is a file, uploaded as it is.
	CheckpointFile = "file"
	// CheckpointTar: the checkpoint path is a directory, uploaded as a
	// tar archive of its regular files and directories in path order.
	CheckpointTar = "tar"
)

// CheckpointEnv names the variable that gives a task of a job with a
// checkpoint the absolute path of its checkpoint path.
const CheckpointEnv = "GPULAYER_CHECKPOINT_DIR"

// CheckpointRef is a checkpoint an attempt's end uploaded, as the
// finish or fail report names it: an artifact, uploaded first.
type CheckpointRef struct {
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
	Format string `json:"format"`
}

// TaskCheckpoint is a task's latest checkpoint and the attempt that
// uploaded it.
type TaskCheckpoint struct {
	SHA256    string `json:"sha256"`
	Size      int64  `json:"size"`
	AttemptID string `json:"attempt_id"`
	Format    string `json:"format"`
}

// AssignedCheckpoint is an assignment's checkpoint: the path (relative to
// the task's directory) the agent uploads when the attempt ends
// preempted, failed or lost to its GPU, and the task's latest checkpoint
// if it has one, which the agent stages at that path before the task
// starts.
type AssignedCheckpoint struct {
	Path   string          `json:"path"`
	Latest *TaskCheckpoint `json:"latest,omitempty"`
}
