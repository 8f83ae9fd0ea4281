package view

import (
	"github.com/gpulayer/gpulayer/coordinator/state/artifacts"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// Artifact renders the record of a stored blob.
func Artifact(a artifacts.Artifact) api.Artifact {
	return api.Artifact{SHA256: a.Digest, Size: a.Size, UploadedBy: a.UploadedBy, UploadedAt: api.FormatTime(a.UploadedAt), Holders: a.Holders}
}
