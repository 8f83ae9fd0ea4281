package command

import (
	"bytes"
	"encoding/json"
	"path"
)

// DefaultInputDir is where an input given without a path is staged:
// inputs/<sha256> under the task's directory.
const DefaultInputDir = "inputs"

// ArtifactRef is one input of a job: an artifact, and where under the
// task's directory it is staged (empty: inputs/<sha256>).
type ArtifactRef struct {
	SHA256 string `json:"sha256"`
	Path   string `json:"path,omitempty"`
}

// StagePath is where the input is staged, relative to the task's
// directory.
func (r ArtifactRef) StagePath() string {
	if r.Path == "" {
		return DefaultInputDir + "/" + r.SHA256
	}
	return path.Clean(r.Path)
}

// UnmarshalJSON reads an object or, as jobs logged before inputs had
// paths carry, a bare digest.
func (r *ArtifactRef) UnmarshalJSON(b []byte) error {
	if isJSONString(b) {
		*r = ArtifactRef{}
		return json.Unmarshal(b, &r.SHA256)
	}
	type plain ArtifactRef
	return json.Unmarshal(b, (*plain)(r))
}

// TaskArtifact is one output a task uploaded: where it was found under
// the task's directory, its digest and its size.
type TaskArtifact struct {
	Path   string `json:"path,omitempty"`
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
}

// UnmarshalJSON reads an object or, as finishes logged before outputs
// were uploaded carry, a bare digest.
func (a *TaskArtifact) UnmarshalJSON(b []byte) error {
	if isJSONString(b) {
		*a = TaskArtifact{}
		return json.Unmarshal(b, &a.SHA256)
	}
	type plain TaskArtifact
	return json.Unmarshal(b, (*plain)(a))
}

func isJSONString(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 0 && b[0] == '"'
}
