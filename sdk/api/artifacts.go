package api

// Artifact describes content-addressed bytes stored by the coordinators.
// Holders lists the coordinators (node ids) whose data dir holds a copy.
type Artifact struct {
	SHA256     string   `json:"sha256"`
	Size       int64    `json:"size"`
	UploadedBy string   `json:"uploaded_by,omitempty"`
	UploadedAt string   `json:"uploaded_at"`
	Holders    []string `json:"holders"`
}

// ArtifactResponse answers PUT /v1/artifacts/{sha256}.
type ArtifactResponse struct {
	Artifact Artifact `json:"artifact"`
}
