//go:build linux

package container

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/client"

	"github.com/gpulayer/gpulayer/plugins/container/containertest"
	"github.com/gpulayer/gpulayer/sdk/executor"
)

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

// probeImage is the test image (containertest.ProbeImage).
const probeImage = containertest.ProbeImage

// dockerOrSkip is containertest.DockerOrSkip.
func dockerOrSkip(t *testing.T) *client.Client { return containertest.DockerOrSkip(t) }
