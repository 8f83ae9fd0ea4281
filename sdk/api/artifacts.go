package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"
)

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

// Artifact limits.
const (
	// MaxTaskOutputBytes bounds the outputs one task uploads, all files
	// together: the agent stops uploading past it, and a finish whose
	// artifacts add up to more is refused.
	MaxTaskOutputBytes = 10 << 30
	// MaxOutputGlobs bounds a job's outputs; MaxOutputGlobBytes each one.
	MaxOutputGlobs     = 32
	MaxOutputGlobBytes = 256
	// MaxOutputFiles bounds the files one task's output globs may match.
	MaxOutputFiles = 1000
)

// DefaultInputDir is where an input given without a path is staged:
// inputs/<sha256> under the task's directory.
const DefaultInputDir = "inputs"

// ArtifactRef is one input of a job: an artifact, and where in the task's
// directory it is staged. Path is relative to that directory; empty
// stages it at inputs/<sha256>.
//
// Its JSON is {"sha256": "...", "path": "..."}; a bare digest string is
// read as {"sha256": "..."} (the shape jobs had before inputs had paths).
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

// UnmarshalJSON reads an object (unknown fields refused) or a bare digest.
func (r *ArtifactRef) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		*r = ArtifactRef{}
		return json.Unmarshal(b, &r.SHA256)
	}
	type plain ArtifactRef
	var p plain
	if err := strictJSON(b, &p); err != nil {
		return err
	}
	*r = ArtifactRef(p)
	return nil
}

// TaskArtifact is one output a task uploaded: where it was found under
// the task's directory, its digest and its size.
//
// A bare digest string is read as {"sha256": "..."} (the shape finish
// requests had before outputs were uploaded).
type TaskArtifact struct {
	Path   string `json:"path,omitempty"`
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
}

// UnmarshalJSON reads an object (unknown fields refused) or a bare digest.
func (a *TaskArtifact) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		*a = TaskArtifact{}
		return json.Unmarshal(b, &a.SHA256)
	}
	type plain TaskArtifact
	var p plain
	if err := strictJSON(b, &p); err != nil {
		return err
	}
	*a = TaskArtifact(p)
	return nil
}

func strictJSON(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// ErrArtifactPath refuses an input path or output glob that is not a
// relative path staying inside the task's directory.
var ErrArtifactPath = errors.New("must be a relative path inside the task's directory: not absolute, no \"..\", no NUL")

// CheckArtifactPath checks an input's path or an output glob: relative,
// slash-separated, at most MaxPathBytes, no NUL or backslash, no ".."
// element, not the task's directory itself, and already clean ("a//b" or
// "a/./b" are refused, so that two spellings never name one file).
func CheckArtifactPath(p string) error {
	switch {
	case p == "":
		return fmt.Errorf("%w (empty)", ErrArtifactPath)
	case len(p) > MaxPathBytes:
		return fmt.Errorf("%w (%d bytes, at most %d)", ErrArtifactPath, len(p), MaxPathBytes)
	case strings.ContainsAny(p, "\x00\\"), strings.HasPrefix(p, "/"):
		return ErrArtifactPath
	case path.Clean(p) != p || p == ".":
		return fmt.Errorf("%w (not clean: %q)", ErrArtifactPath, path.Clean(p))
	}
	for _, el := range strings.Split(p, "/") {
		if el == ".." {
			return ErrArtifactPath
		}
	}
	return nil
}

// CheckOutputGlob checks one of a job's outputs: a path as
// CheckArtifactPath allows, at most MaxOutputGlobBytes, whose pattern
// syntax path.Match accepts.
func CheckOutputGlob(g string) error {
	if len(g) > MaxOutputGlobBytes {
		return fmt.Errorf("%d bytes, at most %d", len(g), MaxOutputGlobBytes)
	}
	if err := CheckArtifactPath(g); err != nil {
		return err
	}
	if _, err := path.Match(g, ""); err != nil {
		return fmt.Errorf("not a glob: %w", err)
	}
	return nil
}

// ValidDigest reports whether d is a SHA-256 digest as artifacts are
// named: 64 lowercase hex characters.
func ValidDigest(d string) bool {
	if len(d) != 64 {
		return false
	}
	for i := 0; i < len(d); i++ {
		c := d[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
