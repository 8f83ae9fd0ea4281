package runner

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"time"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// Checkpoints (docs/preemption.md). For a job with a checkpoint path the
// agent uploads that path when an attempt ends preempted, failed, or
// lost to its GPU (uploadCheckpoint), and stages the task's latest
// checkpoint there before the next attempt starts (stageCheckpoint). A
// file goes up as it is; a directory as a tar archive of its regular
// files and directories, in path order, with no times, owners or modes
// beyond the permission bits, so that the same content gives the same
// digest. Everything is read and written through an os.Root on the
// task's directory: no link leads out of it.

// errCheckpointEntry refuses a tar entry that is not a plain file or
// directory with a local name.
var errCheckpointEntry = errors.New("checkpoint archive entry refused")

// checkpointEnv is the variable naming the checkpoint path, for a job
// with one.
func checkpointEnv(a api.Assignment, workDir string) (string, bool) {
	if a.Checkpoint == nil {
		return "", false
	}
	return filepath.Join(workDir, filepath.FromSlash(a.Checkpoint.Path)), true
}

// uploadCheckpoint uploads the assignment's checkpoint path, if the job
// has one and the task left something there. Nothing there, or a
// failure, is logged and leaves the end's report without a checkpoint:
// the task's previous one stays its latest.
func (r *Runner) uploadCheckpoint(ctx context.Context, a api.Assignment, workDir string, log *slog.Logger) *api.CheckpointRef {
	if a.Checkpoint == nil || r.cfg.Artifacts == nil {
		return nil
	}
	root, err := os.OpenRoot(workDir)
	if err != nil {
		log.Warn("checkpoint not uploaded", "error", err)
		return nil
	}
	defer root.Close()
	p := a.Checkpoint.Path
	info, err := root.Lstat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		log.Warn("checkpoint not uploaded", "path", p, "error", err)
		return nil
	case info.Mode().IsRegular():
		art, err := r.uploadOne(ctx, root, p, api.MaxArtifactBody)
		if err != nil {
			log.Warn("checkpoint not uploaded", "path", p, "error", err)
			return nil
		}
		return &api.CheckpointRef{SHA256: art.SHA256, Size: art.Size, Format: api.CheckpointFile}
	case info.IsDir():
		ref, err := r.uploadTree(ctx, root, p)
		if err != nil {
			log.Warn("checkpoint not uploaded", "path", p, "error", err)
			return nil
		}
		return ref
	}
	log.Warn("checkpoint not uploaded: neither a file nor a directory", "path", p)
	return nil
}

// uploadTree archives directory p of root as tar in a temporary file,
// then hashes and uploads it.
func (r *Runner) uploadTree(ctx context.Context, root *os.Root, p string) (*api.CheckpointRef, error) {
	tmp, err := os.CreateTemp("", "gpulayer-checkpoint-*.tar")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	h := sha256.New()
	if err := writeTree(io.MultiWriter(tmp, h), root, p, api.MaxArtifactBody); err != nil {
		return nil, err
	}
	size, err := tmp.Seek(0, io.SeekCurrent)
	if err != nil {
		return nil, err
	}
	if size > api.MaxArtifactBody { // headers of long names outgrew the estimate
		return nil, fmt.Errorf("%w: %d bytes", errCheckpointTooLarge, size)
	}
	digest := hex.EncodeToString(h.Sum(nil))
	_, err = r.cfg.Artifacts.PutArtifactFrom(ctx, digest, size, func() (io.ReadCloser, error) {
		return io.NopCloser(io.NewSectionReader(tmp, 0, size)), nil
	})
	if err != nil {
		return nil, err
	}
	return &api.CheckpointRef{SHA256: digest, Size: size, Format: api.CheckpointTar}, nil
}

// writeTree writes dir of root to w as a tar archive: its directories
// and regular files, in lexical path order (fs.WalkDir's), named
// relative to dir, with only their permission bits; links and the rest
// are left out. An archive that would pass limit bytes is refused
// before its bytes are written (a task's sparse file of terabytes costs
// it nothing and would fill the agent's disk), and each file is read
// through one descriptor opened without following links or blocking on a
// FIFO swapped in after the walk, checked to be a regular file, for the
// size it had then.
func writeTree(w io.Writer, root *os.Root, dir string, limit int64) error {
	tw := tar.NewWriter(w)
	left := limit - 1024 // the end-of-archive blocks
	err := fs.WalkDir(root.FS(), dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		name := p[len(dir)+1:]
		hdr := &tar.Header{Name: name, ModTime: time.Unix(0, 0), Format: tar.FormatPAX}
		switch {
		case d.IsDir():
			info, err := d.Info()
			if err != nil {
				return err
			}
			hdr.Typeflag, hdr.Name, hdr.Mode = tar.TypeDir, name+"/", int64(info.Mode().Perm())
			left -= 1024
		case d.Type().IsRegular():
			f, err := root.OpenFile(p, readOutputFlags, 0)
			if err != nil {
				return err
			}
			defer f.Close()
			info, err := f.Stat()
			switch {
			case err != nil:
				return err
			case !info.Mode().IsRegular():
				return nil // swapped for something else since the walk: left out
			}
			hdr.Typeflag, hdr.Size, hdr.Mode = tar.TypeReg, info.Size(), int64(info.Mode().Perm())
			if left -= 1024 + (info.Size()+511)/512*512; left < 0 {
				return fmt.Errorf("%w: past %d bytes at %s", errCheckpointTooLarge, limit, name)
			}
			if err := tw.WriteHeader(hdr); err != nil {
				return err
			}
			_, err = io.Copy(tw, io.NewSectionReader(f, 0, info.Size()))
			return err
		default:
			return nil
		}
		if left < 0 {
			return fmt.Errorf("%w: past %d bytes at %s", errCheckpointTooLarge, limit, name)
		}
		return tw.WriteHeader(hdr)
	})
	if err != nil {
		return err
	}
	return tw.Close()
}

// errCheckpointTooLarge refuses a checkpoint directory whose archive would
// not fit in one artifact.
var errCheckpointTooLarge = errors.New("the checkpoint's archive is too large for an artifact")

// stageCheckpoint writes the task's latest checkpoint at the job's
// checkpoint path before the task starts: a file as it is, an archive
// unpacked into a directory there; everything owned by the task's user.
func (r *Runner) stageCheckpoint(ctx context.Context, a api.Assignment, workDir string, u User) error {
	if a.Checkpoint == nil || a.Checkpoint.Latest == nil {
		return nil
	}
	if r.cfg.Artifacts == nil {
		return errNoArtifacts
	}
	c, p := a.Checkpoint.Latest, a.Checkpoint.Path
	if err := api.CheckArtifactPath(p); err != nil || !filepath.IsLocal(filepath.FromSlash(p)) {
		return fmt.Errorf("checkpoint path %q: %w", p, api.ErrArtifactPath)
	}
	root, err := os.OpenRoot(workDir)
	if err != nil {
		return err
	}
	defer root.Close()
	if c.Format != api.CheckpointTar {
		return r.stageOne(ctx, root, c.SHA256, p, u)
	}
	tmp, err := os.CreateTemp("", "gpulayer-checkpoint-*.tar")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	if _, err := r.cfg.Artifacts.GetArtifact(ctx, c.SHA256, tmp); err != nil {
		return fmt.Errorf("checkpoint %s: %w", c.SHA256, err)
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return err
	}
	if err := makeParents(root, p, u); err != nil {
		return fmt.Errorf("checkpoint directory %s: %w", p, err)
	}
	return unpackTree(tar.NewReader(tmp), root, p, u)
}

// unpackTree writes the archive's directories and regular files under
// dir of root, refusing any other entry and any name that is not local.
func unpackTree(tr *tar.Reader, root *os.Root, dir string, u User) error {
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		name := path.Clean(hdr.Name)
		if !filepath.IsLocal(filepath.FromSlash(name)) {
			return fmt.Errorf("%w: %q", errCheckpointEntry, hdr.Name)
		}
		p := dir + "/" + name
		switch hdr.Typeflag {
		case tar.TypeDir:
			err = makeParents(root, p, u)
		case tar.TypeReg:
			err = unpackFile(tr, root, p, hdr, u)
		default:
			err = fmt.Errorf("%w: %q is neither a file nor a directory", errCheckpointEntry, hdr.Name)
		}
		if err != nil {
			return err
		}
	}
}

func unpackFile(tr *tar.Reader, root *os.Root, p string, hdr *tar.Header, u User) error {
	if err := makeParents(root, path.Dir(p), u); err != nil {
		return err
	}
	f, err := root.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fs.FileMode(hdr.Mode).Perm()|0o600)
	if err != nil {
		return err
	}
	_, err = io.CopyN(f, tr, hdr.Size)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && u.Switch {
		err = root.Lchown(p, int(u.UID), int(u.GID))
	}
	return err
}
