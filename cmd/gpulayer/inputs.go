package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// inputFile is one --input: a local file and where tasks find it.
type inputFile struct {
	file, path string
}

// parseInputs reads --input FILE[:PATH] values. A value naming a file
// that exists is FILE alone (its name may hold a colon); otherwise it is
// split at its last colon. PATH defaults to FILE's base name and must
// stay inside the task's directory.
func parseInputs(values []string) ([]inputFile, error) {
	var out []inputFile
	for _, v := range values {
		in := inputFile{file: v}
		if _, err := os.Stat(v); err != nil {
			if i := strings.LastIndexByte(v, ':'); i > 0 {
				in.file, in.path = v[:i], v[i+1:]
			}
		}
		if in.path == "" {
			in.path = filepath.Base(in.file)
		}
		info, err := os.Stat(in.file)
		switch {
		case err != nil:
			return nil, usagef("--input %q: %v", v, err)
		case !info.Mode().IsRegular():
			return nil, usagef("--input %q: %s is not a regular file", v, in.file)
		case info.Size() > api.MaxArtifactBody:
			return nil, usagef("--input %q: %d bytes; an artifact holds at most %d", v, info.Size(), int64(api.MaxArtifactBody))
		}
		if err := api.CheckArtifactPath(in.path); err != nil {
			return nil, usagef("--input %q: path %q %v", v, in.path, err)
		}
		out = append(out, in)
	}
	return out, nil
}

// uploadInputs uploads each input file (a file the coordinators hold
// already is not sent again) and returns the job's inputs.
func uploadInputs(ctx context.Context, c *client.Client, ins []inputFile) ([]api.ArtifactRef, error) {
	var refs []api.ArtifactRef
	for _, in := range ins {
		a, err := c.PutArtifactFile(ctx, in.file)
		if err != nil {
			return nil, fmt.Errorf("uploading --input %s: %w", in.file, err)
		}
		refs = append(refs, api.ArtifactRef{SHA256: a.SHA256, Path: in.path})
	}
	return refs, nil
}
