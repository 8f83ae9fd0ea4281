// Package containertest builds what the container executor's tests run
// against a real Docker daemon: a FROM-scratch image holding the static
// probe program (./probe), built through the daemon's build API since
// nothing can be pulled, and the skip for a machine without a daemon.
package containertest

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/build"
	"github.com/docker/docker/client"
)

// ProbeImage is the test image's tag: FROM scratch, /probe as its
// entrypoint (see ./probe for the words it takes).
const ProbeImage = "gpulayer-probe:test"

// probePkg is the probe program's package.
const probePkg = "github.com/gpulayer/gpulayer/plugins/container/containertest/probe"

var (
	once     sync.Once
	buildErr error
)

// DockerOrSkip returns a client of the local daemon with ProbeImage built,
// or skips the test saying why when no daemon answers, so that tests pass
// on a machine without Docker.
func DockerOrSkip(t testing.TB) *client.Client {
	t.Helper()
	c, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err == nil {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		_, err = c.Ping(ctx)
		cancel()
	}
	if err != nil {
		t.Skipf("skipped: no Docker daemon answers (%v); `make test-container` runs this where one does", err)
	}
	t.Cleanup(func() { c.Close() })
	once.Do(func() { buildErr = BuildImage(c, ProbeImage, probePkg, "probe") })
	if buildErr != nil {
		t.Fatalf("building the probe image: %v", buildErr)
	}
	return c
}

// BuildImage compiles the Go command pkg statically and builds the image
// tag from it, FROM scratch with the program as /name, its entrypoint,
// with the daemon's classic builder (nothing is pulled).
func BuildImage(c *client.Client, tag, pkg, name string) error {
	dir, err := os.MkdirTemp("", "gpulayer-image-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, name)
	cmd := exec.Command("go", "build", "-o", bin, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build: %v: %s", err, out)
	}
	prog, err := os.ReadFile(bin)
	if err != nil {
		return err
	}
	var ctxTar bytes.Buffer
	tw := tar.NewWriter(&ctxTar)
	for _, f := range []struct {
		name string
		mode int64
		body []byte
	}{
		{"Dockerfile", 0o644, []byte(fmt.Sprintf("FROM scratch\nCOPY %s /%s\nENTRYPOINT [\"/%s\"]\n", name, name, name))},
		{name, 0o755, prog},
	} {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: f.mode, Size: int64(len(f.body))}); err != nil {
			return err
		}
		if _, err := tw.Write(f.body); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	resp, err := c.ImageBuild(ctx, &ctxTar, build.ImageBuildOptions{Tags: []string{tag}, Remove: true, ForceRemove: true, Version: build.BuilderV1})
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if bytes.Contains(out, []byte(`"error"`)) {
		return fmt.Errorf("image build: %s", strings.TrimSpace(string(out)))
	}
	return nil
}
