package command

// Checkpoint formats: how a checkpoint's bytes hold its path.
const (
	// CheckpointFile: the path is a regular file, uploaded as it is.
	CheckpointFile = "file"
	// CheckpointTar: the path is a directory, uploaded as a tar archive
	// of its regular files and directories, in path order.
	CheckpointTar = "tar"
)

// Checkpoint is the checkpoint an attempt's end uploaded (an artifact
// recorded before the end is reported): the task's latest, staged at the
// job's checkpoint path before its next attempt starts.
type Checkpoint struct {
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
	Format string `json:"format"`
}
