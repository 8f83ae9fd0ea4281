package runner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"slices"
	"strings"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// uploadOutputs uploads the files the assignment's output globs match
// under the task's directory, once its process ended, and returns what
// it uploaded for the finish, with a sentence naming what could not be
// uploaded (empty when all was). The task's result is never lost to an
// output: the finish is sent whatever happens here.
//
// A glob matches files (path.Match, relative to the task's directory); one
// that matches a directory takes the regular files under it. Symbolic
// links are never followed out of the directory (everything is read
// through an os.Root) and a link is not an output; nor is anything but a
// regular file. At most api.MaxOutputFiles files, each at most
// api.MaxArtifactBody and all together at most api.MaxTaskOutputBytes.
func (r *Runner) uploadOutputs(ctx context.Context, a api.Assignment, workDir string, log *slog.Logger) ([]api.TaskArtifact, string) {
	if len(a.Outputs) == 0 {
		return nil, ""
	}
	if r.cfg.Artifacts == nil {
		return nil, "outputs not uploaded: " + errNoArtifacts.Error()
	}
	root, err := os.OpenRoot(workDir)
	if err != nil {
		return nil, "outputs not uploaded: " + err.Error()
	}
	defer root.Close()
	files, problems := matchOutputs(root.FS(), a.Outputs)
	var out []api.TaskArtifact
	var total int64
	for _, p := range files {
		art, err := r.uploadOne(ctx, root, p, api.MaxTaskOutputBytes-total)
		if err != nil {
			log.Warn("output not uploaded", "path", p, "error", err)
			problems = append(problems, fmt.Sprintf("output %s could not be uploaded: %v", p, err))
			continue
		}
		total += art.Size
		out = append(out, art)
	}
	return out, strings.Join(problems, "; ")
}

// matchOutputs lists the regular files the globs match, sorted, each
// once, at most api.MaxOutputFiles, with what went wrong on the way.
func matchOutputs(fsys fs.FS, globs []string) ([]string, []string) {
	seen := map[string]bool{}
	var problems []string
	for _, g := range globs {
		matches, err := fs.Glob(fsys, g)
		if err != nil {
			problems = append(problems, fmt.Sprintf("output %s: %v", g, err))
			continue
		}
		for _, m := range matches {
			info, err := fs.Lstat(fsys, m)
			switch {
			case err != nil:
				continue
			case info.Mode().IsRegular():
				seen[m] = true
			case info.IsDir():
				_ = fs.WalkDir(fsys, m, func(p string, d fs.DirEntry, err error) error {
					if err == nil && d.Type().IsRegular() {
						seen[p] = true
					}
					if len(seen) > api.MaxOutputFiles {
						return fs.SkipAll
					}
					return nil
				})
			}
		}
	}
	files := make([]string, 0, len(seen))
	for p := range seen {
		files = append(files, p)
	}
	slices.Sort(files)
	if len(files) > api.MaxOutputFiles {
		problems = append(problems, fmt.Sprintf("more than %d files match the outputs; only the first %d (by path) were uploaded", api.MaxOutputFiles, api.MaxOutputFiles))
		files = files[:api.MaxOutputFiles]
	}
	return files, problems
}

// uploadOne hashes and uploads one output, reading it through one open
// file (what is uploaded is what was hashed, or the coordinator refuses
// it), if it is at most left bytes.
func (r *Runner) uploadOne(ctx context.Context, root *os.Root, p string, left int64) (api.TaskArtifact, error) {
	if err := api.CheckArtifactPath(p); err != nil {
		return api.TaskArtifact{}, err
	}
	f, err := root.OpenFile(p, readOutputFlags, 0)
	if err != nil {
		return api.TaskArtifact{}, err
	}
	defer f.Close()
	info, err := f.Stat()
	switch {
	case err != nil:
		return api.TaskArtifact{}, err
	case !info.Mode().IsRegular():
		return api.TaskArtifact{}, fmt.Errorf("not a regular file")
	case info.Size() > api.MaxArtifactBody:
		return api.TaskArtifact{}, fmt.Errorf("%d bytes; an artifact holds at most %d", info.Size(), int64(api.MaxArtifactBody))
	case info.Size() > left:
		return api.TaskArtifact{}, fmt.Errorf("%d bytes would take the task's outputs past %d bytes in all", info.Size(), int64(api.MaxTaskOutputBytes))
	}
	h := sha256.New()
	size, err := io.Copy(h, io.NewSectionReader(f, 0, info.Size()))
	if err != nil {
		return api.TaskArtifact{}, err
	}
	digest := hex.EncodeToString(h.Sum(nil))
	_, err = r.cfg.Artifacts.PutArtifactFrom(ctx, digest, size, func() (io.ReadCloser, error) {
		return io.NopCloser(io.NewSectionReader(f, 0, size)), nil
	})
	if err != nil {
		return api.TaskArtifact{}, err
	}
	return api.TaskArtifact{Path: p, SHA256: digest, Size: size}, nil
}
