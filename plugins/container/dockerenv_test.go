//go:build linux

package container

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/build"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/client"

	"github.com/gpulayer/gpulayer/sdk/executor"
)

// probeImage is the test image: FROM scratch with testdata/probe, built
// here (nothing can be pulled).
const probeImage = "gpulayer-probe:test"

var (
	probeOnce sync.Once
	probeErr  error
)

// dockerOrSkip returns a client of the local daemon, or skips the test
// saying why when none answers, so that the package's tests pass on a
// machine without Docker.
func dockerOrSkip(t *testing.T) *client.Client {
	t.Helper()
	c, err := Dial()
	if err == nil {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		_, err = c.Ping(ctx)
		cancel()
	}
	if err != nil {
		t.Skipf("skipped: no Docker daemon answers (%v); `make test-container` runs this where one does", err)
	}
	t.Cleanup(func() { c.Close() })
	probeOnce.Do(func() { probeErr = buildProbeImage(c) })
	if probeErr != nil {
		t.Fatalf("building the probe image: %v", probeErr)
	}
	return c
}

// buildProbeImage compiles testdata/probe statically and builds
// probeImage from it through the daemon's build API.
func buildProbeImage(c *client.Client) error {
	dir, err := os.MkdirTemp("", "gpulayer-probe-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "probe")
	cmd := exec.Command("go", "build", "-o", bin, "./testdata/probe")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return &buildError{string(out), err}
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
		{"Dockerfile", 0o644, []byte("FROM scratch\nCOPY probe /probe\nENTRYPOINT [\"/probe\"]\n")},
		{"probe", 0o755, prog},
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
	resp, err := c.ImageBuild(ctx, &ctxTar, build.ImageBuildOptions{Tags: []string{probeImage}, Remove: true, ForceRemove: true, Version: build.BuilderV1})
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if bytes.Contains(out, []byte(`"error"`)) {
		return &buildError{string(out), nil}
	}
	return nil
}

type buildError struct {
	out string
	err error
}

func (e *buildError) Error() string { return strings.TrimSpace(e.out) + " " + errString(e.err) }

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// testUID is the task user of the tests (no such user exists in the
// image or needs to on the host).
const testUID = "4242"

// taskFor is a task running probe words as the test user, in a fresh task
// directory owned by that user, under sandbox sb.
func taskFor(t *testing.T, id string, cfg string, sb executor.Sandbox) executor.Task {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, id)
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, 4242, 4242); err != nil {
		t.Fatal(err)
	}
	return executor.Task{
		ID: id, TaskID: "task-" + id, JobID: "job-" + id,
		Config:  []byte(cfg),
		WorkDir: dir,
		Env: map[string]string{
			executor.EnvTaskUID: testUID, executor.EnvTaskGID: testUID,
			executor.EnvSandbox: sb.Encode(),
			"HOME":              dir,
		},
	}
}

// containersOf lists the containers, running or not, labelled with attempt.
func containersOf(t *testing.T, c *client.Client, attempt string) []container.Summary {
	t.Helper()
	list, err := c.ContainerList(t.Context(), container.ListOptions{All: true, Filters: filters.NewArgs(filters.Arg("label", LabelAttempt+"="+attempt))})
	if err != nil {
		t.Fatal(err)
	}
	return list
}

// collectLogs returns the task's output by stream, once it ended.
func collectLogs(t *testing.T, e *Executor, id string) (stdout, stderr string) {
	t.Helper()
	var out, errb strings.Builder
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	err := e.Logs(ctx, id, func(ch executor.LogChunk) error {
		if ch.Stream == "stderr" {
			errb.Write(ch.Data)
		} else {
			out.Write(ch.Data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String()
}

func waitResult(t *testing.T, e *Executor, id string) executor.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	res, err := e.Wait(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return res
}
