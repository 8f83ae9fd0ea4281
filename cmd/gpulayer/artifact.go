package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

func artifactCmd() *cobra.Command {
	return group("artifact", "upload and download artifacts (content-addressed files)",
		"  gpulayer artifact put weights.bin\n  gpulayer artifact get 9f86d0...0a08 -o weights.bin",
		artifactPutCmd(), artifactGetCmd())
}

func artifactPutCmd() *cobra.Command {
	out := jsonOnly()
	return clientLeaf(&cobra.Command{
		Use:   "put [flags] FILE",
		Short: "upload a file; prints its sha256 digest",
		Long: `put hashes FILE, then streams it to the coordinators, which keep it
under its SHA-256 digest (on two of them, in a cluster of more than one).
It prints the digest, which job submit --input and a job's inputs name.
A file already stored is not sent again. At most 2 GiB.`,
		Example: "  gpulayer artifact put weights.bin\n  gpulayer artifact put data.csv --json",
		Args:    exactArgs(1, "file"),
	}, out, func(cmd *cobra.Command, c *client.Client, args []string, out *outputFlags) error {
		a, err := c.PutArtifactFile(cmd.Context(), args[0])
		if err != nil {
			return err
		}
		if out.json {
			return printJSON(a)
		}
		fmt.Fprintln(humanOut, a.SHA256)
		return nil
	})
}

func artifactGetCmd() *cobra.Command {
	var dest string
	cmd := clientLeaf(&cobra.Command{
		Use:   "get [flags] DIGEST",
		Short: "download an artifact, verifying its digest",
		Long: `get downloads the artifact DIGEST to stdout, or with -o to FILE. The
bytes are checked against DIGEST: with -o, a file whose bytes do not match
is removed (it is written beside FILE first, and renamed into place once
it matched); on stdout the command fails once the mismatch is known.`,
		Example: "  gpulayer artifact get 9f86d0...0a08 -o weights.bin\n  gpulayer artifact get 9f86d0...0a08 | sha256sum",
		Args:    exactArgs(1, "digest"),
	}, nil, func(cmd *cobra.Command, c *client.Client, args []string, _ *outputFlags) error {
		if !api.ValidDigest(args[0]) {
			return usagef("%q is not a sha256 digest (64 lowercase hex characters)", args[0])
		}
		if dest == "" || dest == "-" {
			_, err := c.GetArtifact(cmd.Context(), args[0], os.Stdout)
			return err
		}
		return download(cmd, c, args[0], dest)
	})
	cmd.Flags().StringVarP(&dest, "output-file", "o", "", "write to FILE instead of stdout")
	return cmd
}

// download writes the artifact digest to path, through a temporary file
// beside it that is renamed into place only once its bytes matched.
func download(cmd *cobra.Command, c *client.Client, digest, path string) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".part-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = c.GetArtifact(cmd.Context(), digest, f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		if errors.Is(err, client.ErrArtifactMismatch) {
			return fmt.Errorf("%s not written: %w", path, err)
		}
		return err
	}
	return nil
}
