package api

import (
	"errors"
	"fmt"
	"path"
	"strings"
)

// ContainerExecutor is the name of the built-in container executor.
const ContainerExecutor = "container"

// MaxImageRefBytes bounds a container config's image reference.
const MaxImageRefBytes = 512

// ContainerConfig is the container executor's task config
// (docs/containers.md). Image names an image present on the node (or, with
// ImageArtifact, one of the images the archive holds); ImageArtifact is
// the SHA-256 digest of an input artifact holding a `docker save` archive,
// loaded before the task starts. Command replaces the image's entrypoint
// and Args its command (exec form, no shell). Env is added to the image's
// environment (the agent's task variables win). WorkDir, relative, is
// inside the task directory (as the exec executor's dir); absolute, a
// path of the image; empty, the task directory. ReadOnlyRoot mounts the
// image's root file system read-only.
type ContainerConfig struct {
	Image         string            `json:"image,omitempty"`
	Command       []string          `json:"command,omitempty"`
	Args          []string          `json:"args,omitempty"`
	Env           map[string]string `json:"env,omitempty"`
	WorkDir       string            `json:"workdir,omitempty"`
	ImageArtifact string            `json:"image_artifact,omitempty"`
	ReadOnlyRoot  bool              `json:"read_only_root,omitempty"`
}

// ErrContainerConfig is wrapped by ContainerConfig.Check's errors.
var ErrContainerConfig = errors.New("container config")

// Check validates c's fields on their own (not against a job's inputs):
// an image or an image artifact is required; the image reference is
// bounded and made of the characters references use; the artifact is a
// digest; env names are usable; command, args and env hold no NUL; a
// relative workdir stays inside the task directory.
func (c *ContainerConfig) Check() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrContainerConfig, fmt.Sprintf(format, a...))
	}
	if c.Image == "" && c.ImageArtifact == "" {
		return bad("\"image\" or \"image_artifact\" is required")
	}
	if len(c.Image) > MaxImageRefBytes {
		return bad("image is longer than %d bytes", MaxImageRefBytes)
	}
	if c.Image != "" && !validImageRef(c.Image) {
		return bad("image %q is not an image reference (name[:tag][@digest] or an image id)", c.Image)
	}
	if c.ImageArtifact != "" && !ValidDigest(strings.TrimPrefix(c.ImageArtifact, "sha256:")) {
		return bad("image_artifact %q is not a SHA-256 digest (64 lowercase hex characters)", c.ImageArtifact)
	}
	for _, s := range append(append([]string(nil), c.Command...), c.Args...) {
		if strings.ContainsRune(s, 0) {
			return bad("NUL byte in command or args")
		}
	}
	if len(c.Command) > 0 && c.Command[0] == "" {
		return bad("command[0] is empty")
	}
	for k, v := range c.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") || strings.ContainsRune(v, 0) {
			return bad("bad environment variable %q", k)
		}
	}
	if strings.ContainsRune(c.WorkDir, 0) {
		return bad("NUL byte in workdir")
	}
	if c.WorkDir != "" && !path.IsAbs(c.WorkDir) {
		if err := CheckExecDir(c.WorkDir); err != nil {
			return bad("workdir %q %v", c.WorkDir, err)
		}
	}
	return nil
}

// ImageDigest is ImageArtifact without a "sha256:" prefix.
func (c *ContainerConfig) ImageDigest() string { return strings.TrimPrefix(c.ImageArtifact, "sha256:") }

// validImageRef reports whether s is made of what an image reference
// holds: letters, digits and ._-/:@ with no leading separator. The
// daemon parses it fully; this keeps anything else out of its API.
func validImageRef(s string) bool {
	if s == "" || strings.ContainsAny(s[:1], "._-/:@") {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._-/:@", r)) {
			return false
		}
	}
	return true
}
