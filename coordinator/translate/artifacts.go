package translate

import (
	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// ArtifactRefsFromAPI reads a job's inputs.
func ArtifactRefsFromAPI(in []api.ArtifactRef) []command.ArtifactRef {
	return convertEach(in, func(r api.ArtifactRef) command.ArtifactRef { return command.ArtifactRef(r) })
}

// ArtifactRefsToAPI renders a job's inputs.
func ArtifactRefsToAPI(in []command.ArtifactRef) []api.ArtifactRef {
	return convertEach(in, func(r command.ArtifactRef) api.ArtifactRef { return api.ArtifactRef(r) })
}

// TaskArtifactsFromAPI reads the outputs a finish lists.
func TaskArtifactsFromAPI(in []api.TaskArtifact) []command.TaskArtifact {
	return convertEach(in, func(a api.TaskArtifact) command.TaskArtifact { return command.TaskArtifact(a) })
}

// TaskArtifactsToAPI renders a task's outputs.
func TaskArtifactsToAPI(in []command.TaskArtifact) []api.TaskArtifact {
	return convertEach(in, func(a command.TaskArtifact) api.TaskArtifact { return api.TaskArtifact(a) })
}

// convertEach maps a list, nil staying nil (an empty list stays empty).
func convertEach[From, To any](in []From, f func(From) To) []To {
	if in == nil {
		return nil
	}
	out := make([]To, len(in))
	for i, v := range in {
		out[i] = f(v)
	}
	return out
}
