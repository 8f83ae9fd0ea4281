package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// Artifacts is the part of the client that moves artifacts: a task's
// inputs down, its outputs up.
type Artifacts interface {
	// GetArtifact copies the bytes of digest to w, and fails with
	// client.ErrArtifactMismatch when they do not hash to it.
	GetArtifact(ctx context.Context, digest string, w io.Writer) (int64, error)
	PutArtifactFrom(ctx context.Context, digest string, size int64, open func() (io.ReadCloser, error)) (api.Artifact, error)
}

var _ Artifacts = (*client.Client)(nil)

// Staging errors.
var (
	// ErrInputMismatch: an input's bytes did not hash to its digest; the
	// file was removed.
	ErrInputMismatch = errors.New("does not match its digest")
	// errNoArtifacts: the runner was given no Artifacts to fetch with.
	errNoArtifacts = errors.New("this agent cannot fetch artifacts")
)

// stageInputs writes each of the assignment's inputs at its path under the
// task's directory, verifying its digest as it is written, owned by the
// task's user. Every file and directory is made through an os.Root on the
// task's directory, so that no path, and no symbolic link found on the way,
// leads outside it; files are created exclusively (never over something
// that is there, a link included).
func (r *Runner) stageInputs(ctx context.Context, a api.Assignment, workDir string, u User) error {
	if len(a.Inputs) == 0 {
		return nil
	}
	if r.cfg.Artifacts == nil {
		return errNoArtifacts
	}
	root, err := os.OpenRoot(workDir)
	if err != nil {
		return err
	}
	defer root.Close()
	for _, in := range a.Inputs {
		p := in.StagePath()
		if err := api.CheckArtifactPath(p); err != nil || !filepath.IsLocal(filepath.FromSlash(p)) {
			return fmt.Errorf("input %s: path %q: %w", in.SHA256, p, api.ErrArtifactPath)
		}
		if err := r.stageOne(ctx, root, in.SHA256, p, u); err != nil {
			return err
		}
	}
	return nil
}

func (r *Runner) stageOne(ctx context.Context, root *os.Root, digest, p string, u User) error {
	if err := makeParents(root, path.Dir(p), u); err != nil {
		return fmt.Errorf("input %s: making the directory of %s: %w", digest, p, err)
	}
	f, err := root.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("input %s: creating %s: %w", digest, p, err)
	}
	_, err = r.cfg.Artifacts.GetArtifact(ctx, digest, f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = root.Remove(p)
		if errors.Is(err, client.ErrArtifactMismatch) {
			return fmt.Errorf("input %s (for %s) %w: %v", digest, p, ErrInputMismatch, err)
		}
		return fmt.Errorf("input %s: fetching it for %s: %w", digest, p, err)
	}
	if u.Switch {
		if err := root.Lchown(p, int(u.UID), int(u.GID)); err != nil {
			return fmt.Errorf("input %s: giving %s to uid %d: %w", digest, p, u.UID, err)
		}
	}
	return nil
}

// makeParents makes dir and the directories above it under root, 0700 and
// owned by the task's user; one that exists must be a directory, not a
// link to one.
func makeParents(root *os.Root, dir string, u User) error {
	if dir == "." {
		return nil
	}
	var sofar []string
	for _, el := range strings.Split(dir, "/") {
		sofar = append(sofar, el)
		d := strings.Join(sofar, "/")
		err := root.Mkdir(d, 0o700)
		switch {
		case err == nil:
			if u.Switch {
				if err := root.Lchown(d, int(u.UID), int(u.GID)); err != nil {
					return err
				}
			}
		case errors.Is(err, fs.ErrExist):
			info, err := root.Lstat(d)
			if err != nil {
				return err
			}
			if !info.IsDir() {
				return fmt.Errorf("%s is not a directory", d)
			}
		default:
			return err
		}
	}
	return nil
}
