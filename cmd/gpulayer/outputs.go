package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// outputRow is one output of one task, as job outputs lists it.
type outputRow struct {
	TaskID string `json:"task_id"`
	Index  int    `json:"index"`
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
}

func jobOutputsCmd() *cobra.Command {
	var dir string
	out := &outputFlags{}
	cmd := clientLeaf(&cobra.Command{
		Use:   "outputs [flags] JOB",
		Short: "list (and download) the outputs a job's tasks uploaded",
		Long: `outputs lists, for each task of JOB, the files its output globs matched
and the agent uploaded: path under the task's directory, sha256, size.

With --download DIR each is written to DIR/<task index>/<path>, checked
against its digest (a file that does not match is not kept). Nothing is
written outside DIR: a path that would leave it is refused.`,
		Example: "  gpulayer job outputs j0001\n  gpulayer job outputs j0001 --download ./results\n  gpulayer job outputs j0001 -o json",
		Args:    exactArgs(1, "job id"),
	}, out, func(cmd *cobra.Command, c *client.Client, args []string, out *outputFlags) error {
		job, err := c.Job(cmd.Context(), args[0])
		if err != nil {
			return err
		}
		var rows []outputRow
		for _, t := range job.Tasks {
			for _, a := range t.Artifacts {
				rows = append(rows, outputRow{TaskID: t.ID, Index: t.Index, Path: a.Path, SHA256: a.SHA256, Size: a.Size})
			}
		}
		if dir != "" {
			if err := downloadOutputs(cmd.Context(), c, dir, rows); err != nil {
				return err
			}
		}
		if rows == nil {
			rows = []outputRow{}
		}
		return out.print(rows, func(w io.Writer, _ bool) {
			row(w, "TASK", "INDEX", "PATH", "SHA256", "SIZE")
			for _, r := range rows {
				row(w, r.TaskID, strconv.Itoa(r.Index), dash(r.Path), r.SHA256, strconv.FormatInt(r.Size, 10))
			}
		})
	})
	cmd.Flags().StringVar(&dir, "download", "", "write each output to DIR/<task index>/<path>, verifying its digest")
	return cmd
}

// downloadOutputs writes each row under dir through an os.Root, so that no
// path (nor a link found in dir) leads outside it; each file is written
// beside its place and renamed there once its bytes matched its digest.
func downloadOutputs(ctx context.Context, c *client.Client, dir string, rows []outputRow) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	for _, r := range rows {
		name := r.Path
		if name == "" {
			name = r.SHA256 // an older agent's bare digest
		}
		if api.CheckArtifactPath(name) != nil || !filepath.IsLocal(filepath.FromSlash(name)) {
			return fmt.Errorf("task %s: output path %q would leave %s; not written", r.TaskID, name, dir)
		}
		p := filepath.Join(strconv.Itoa(r.Index), filepath.FromSlash(name))
		if err := fetchInto(ctx, c, root, r.SHA256, p); err != nil {
			return fmt.Errorf("task %s: %s: %w", r.TaskID, name, err)
		}
		fmt.Fprintf(humanErr, "%s\n", filepath.Join(dir, p))
	}
	return nil
}

func fetchInto(ctx context.Context, c *client.Client, root *os.Root, digest, p string) error {
	if err := root.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	part := p + ".part"
	f, err := root.OpenFile(part, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = c.GetArtifact(ctx, digest, f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = root.Rename(part, p)
	}
	if err != nil {
		_ = root.Remove(part)
		if errors.Is(err, client.ErrArtifactMismatch) {
			return fmt.Errorf("not written: %w", err)
		}
		return err
	}
	return nil
}
