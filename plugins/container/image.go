package container

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strings"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/client"

	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/executor"
)

// Image errors.
var (
	// ErrNoImage: the image is not on the node (nothing is pulled).
	ErrNoImage = errors.New("image not present on this node (the container executor pulls nothing)")
	// ErrImageDigest: the image archive does not hash to image_artifact.
	ErrImageDigest = errors.New("image archive does not match its digest")
	// ErrImageChoice: the archive's images do not say which one to run.
	ErrImageChoice = errors.New("cannot tell which image of the archive to run")
)

// resolveImage returns the id of the image the task runs: image_artifact
// loaded (its archive verified against the digest first), then the
// config's image, which must be present (or, with an archive, one of its
// images).
func resolveImage(ctx context.Context, eng engine, cfg api.ContainerConfig, taskDir string) (string, error) {
	var loaded []string
	if cfg.ImageArtifact != "" {
		ids, err := loadArchive(ctx, eng, cfg.ImageDigest(), taskDir)
		if err != nil {
			return "", err
		}
		loaded = ids
		if cfg.Image == "" {
			if len(loaded) != 1 {
				return "", executor.Permanent(fmt.Errorf("%w: it holds %d images; name one in \"image\"", ErrImageChoice, len(loaded)))
			}
			return loaded[0], nil
		}
	}
	img, err := eng.ImageInspect(ctx, cfg.Image)
	switch {
	case cerrdefs.IsNotFound(err):
		return "", executor.Permanent(fmt.Errorf("%w: %q", ErrNoImage, cfg.Image))
	case err != nil:
		return "", fmt.Errorf("inspecting image %q: %w", cfg.Image, err)
	}
	if loaded != nil && !slices.Contains(loaded, img.ID) {
		return "", executor.Permanent(fmt.Errorf("%w: %q is not among the images of image_artifact (%v)", ErrImageChoice, cfg.Image, loaded))
	}
	return img.ID, nil
}

// loadArchive loads the `docker save` archive staged as the task's input
// digest (inputs/<digest> in its directory, opened without leaving it),
// after checking that the file hashes to digest, and returns the ids of
// the images it held.
func loadArchive(ctx context.Context, eng engine, digest, taskDir string) ([]string, error) {
	if taskDir == "" {
		return nil, executor.Permanent(errors.New("image_artifact: the task has no directory to find it in"))
	}
	root, err := os.OpenRoot(taskDir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	f, err := root.Open(path.Join(api.DefaultInputDir, digest))
	if err != nil {
		return nil, executor.Permanent(fmt.Errorf("image_artifact %s: not staged as an input: %w", digest, err))
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return nil, fmt.Errorf("image_artifact %s: %w", digest, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != digest {
		return nil, executor.Permanent(fmt.Errorf("%w: image_artifact %s, the file hashes to %s", ErrImageDigest, digest, got))
	}
	// The same open file, read again: what was hashed is what is loaded.
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	resp, err := eng.ImageLoad(ctx, f, client.ImageLoadWithQuiet(true))
	if err != nil {
		return nil, fmt.Errorf("loading image_artifact %s: %w", digest, err)
	}
	defer resp.Body.Close()
	refs, err := loadedImages(resp.Body)
	if err != nil {
		return nil, executor.Permanent(fmt.Errorf("loading image_artifact %s: %w", digest, err))
	}
	var ids []string
	for _, ref := range refs {
		img, err := eng.ImageInspect(ctx, ref)
		if err != nil {
			return nil, fmt.Errorf("inspecting loaded image %q: %w", ref, err)
		}
		if !slices.Contains(ids, img.ID) {
			ids = append(ids, img.ID)
		}
	}
	if len(ids) == 0 {
		return nil, executor.Permanent(fmt.Errorf("loading image_artifact %s: the archive held no image", digest))
	}
	return ids, nil
}

// loadMessage is one line of the daemon's answer to an image load.
type loadMessage struct {
	Stream string `json:"stream"`
	Error  string `json:"error"`
}

// loadedImages reads the daemon's answer to an image load: the names and
// ids of the images loaded, or the error it reports.
func loadedImages(r io.Reader) ([]string, error) {
	var refs []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var m loadMessage
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			continue // not a JSON message: progress, ignored
		}
		if m.Error != "" {
			return nil, errors.New(m.Error)
		}
		for _, prefix := range []string{"Loaded image ID: ", "Loaded image: "} {
			if ref, ok := strings.CutPrefix(strings.TrimSpace(m.Stream), prefix); ok {
				refs = append(refs, ref)
			}
		}
	}
	return refs, sc.Err()
}
