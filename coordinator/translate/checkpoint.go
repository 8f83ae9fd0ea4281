package translate

import (
	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// CheckpointFromAPI is a reported checkpoint as the state takes it.
func CheckpointFromAPI(c *api.CheckpointRef) *command.Checkpoint {
	if c == nil {
		return nil
	}
	return &command.Checkpoint{SHA256: c.SHA256, Size: c.Size, Format: c.Format}
}
