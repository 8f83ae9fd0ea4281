//go:build linux

package container

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	specs "tags.cncf.io/container-device-interface/specs-go"

	"github.com/gpulayer/gpulayer/agent/gpucdi"
	"github.com/gpulayer/gpulayer/plugins/container/containertest"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/executor"
	"github.com/gpulayer/gpulayer/sdk/executor/executortest"
)

// A task runs end to end in a container as its user: its output arrives
// by stream, its exit code is the container's, it has no capabilities and
// no-new-privileges, a read-only root, the sandbox's memory limit, its
// task directory writable at its own path, and its GPU through the CDI
// spec's edits (a mock GPU whose device file is /dev/null on the host);
// the container is gone once the task ended.
func TestDockerRunsATaskInItsSandbox(t *testing.T) {
	c := dockerOrSkip(t)
	e := newWith(Options{}, c)
	cdiDir := t.TempDir()
	spec, err := gpucdi.Build(gpucdi.Inventory{
		Devices: []api.Device{{UUID: "GPU-mock-0", Healthy: true}},
		Nodes:   map[string]string{"GPU-mock-0": "/dev/nvidia0"},
		Exists:  func(p string) bool { return p == "/dev/nvidia0" },
	})
	if err != nil {
		t.Fatal(err)
	}
	spec.Devices[0].ContainerEdits.DeviceNodes = []*specs.DeviceNode{{Path: "/dev/nvidia0", HostPath: "/dev/null"}}
	if spec.Version, err = specs.MinimumRequiredVersion(spec); err != nil {
		t.Fatal(err)
	}
	if _, err := gpucdi.Write(cdiDir, "gpulayer.json", spec); err != nil {
		t.Fatal(err)
	}
	task := taskFor(t, "run1", "", executor.Sandbox{MemoryBytes: 64 << 20, CPUMillis: 500})
	out := filepath.Join(task.WorkDir, "out.txt")
	cfg, _ := json.Marshal(api.ContainerConfig{Image: probeImage, ReadOnlyRoot: true, Env: map[string]string{"FROM_CONFIG": "yes"},
		Args: []string{"id", "caps", "rootwrite", "memlimit", "env", "NVIDIA_VISIBLE_DEVICES", "env", "FROM_CONFIG", "stat", "/dev/nvidia0", "write", out, "stderr", "exit", "3"}})
	task.Config = cfg
	task.Devices = []string{"GPU-mock-0"}
	task.Env[executor.EnvCDIDir] = cdiDir
	if err := e.Start(t.Context(), task); err != nil {
		t.Fatal(err)
	}
	stdout, stderr := collectLogs(t, e, task.ID)
	res := waitResult(t, e, task.ID)
	if res.ExitCode != 3 {
		t.Errorf("exit code %d (%s), want 3", res.ExitCode, res.Reason)
	}
	for _, want := range []string{
		"uid=4242 gid=4242 groups=[4242]", // Docker lists the primary group, no other
		"CapEff: 0000000000000000",
		"NoNewPrivs: 1",
		"rootwrite: open /probe-was-here: read-only file system",
		"memlimit: 67108864 <nil>",
		"env NVIDIA_VISIBLE_DEVICES=GPU-mock-0",
		"env FROM_CONFIG=yes",
		"stat /dev/nvidia0: char=true rdev=1:3 <nil>",
		"write " + out + ": <nil>",
	} {
		if !strings.Contains(stdout, want+"\n") {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if stderr != "to stderr\n" {
		t.Errorf("stderr %q", stderr)
	}
	if fi, err := os.Stat(out); err != nil || fi.Sys().(*syscall.Stat_t).Uid != 4242 {
		t.Errorf("output file: %v %+v, want it owned by the task's uid", err, fi)
	}
	if left := containersOf(t, c, task.ID); len(left) != 0 {
		t.Errorf("containers left: %+v", left)
	}
}

// Stop ends a running task, whose result says it was stopped, and
// removes its container.
func TestDockerStopRemovesTheContainer(t *testing.T) {
	c := dockerOrSkip(t)
	e := newWith(Options{}, c)
	task := taskFor(t, "stop1", `{"image":"`+probeImage+`","args":["sleep"]}`, executor.Sandbox{})
	if err := e.Start(t.Context(), task); err != nil {
		t.Fatal(err)
	}
	if len(containersOf(t, c, task.ID)) != 1 {
		t.Fatal("no running container for the task")
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := e.Stop(ctx, task.ID, time.Second); err != nil {
		t.Fatal(err)
	}
	res := waitResult(t, e, task.ID)
	if res.ExitCode == 0 || !strings.HasPrefix(res.Reason, "stopped") {
		t.Errorf("result %+v, want a stopped one", res)
	}
	if left := containersOf(t, c, task.ID); len(left) != 0 {
		t.Errorf("containers left: %+v", left)
	}
	if err := e.Start(t.Context(), task); !errors.Is(err, executor.ErrDuplicateTask) {
		t.Errorf("second start: %v", err)
	}
}

// KillAll (the plugin exiting without its agent) removes running
// containers and refuses more.
func TestDockerKillAllRemovesContainers(t *testing.T) {
	c := dockerOrSkip(t)
	e := newWith(Options{}, c)
	task := taskFor(t, "kill1", `{"image":"`+probeImage+`","args":["sleep"]}`, executor.Sandbox{})
	if err := e.Start(t.Context(), task); err != nil {
		t.Fatal(err)
	}
	e.KillAll()
	res := waitResult(t, e, task.ID)
	if res.ExitCode == 0 {
		t.Errorf("result %+v after KillAll", res)
	}
	if left := containersOf(t, c, task.ID); len(left) != 0 {
		t.Errorf("containers left: %+v", left)
	}
	again := taskFor(t, "kill2", `{"image":"`+probeImage+`"}`, executor.Sandbox{})
	if err := e.Start(t.Context(), again); !errors.Is(err, ErrKilled) {
		t.Errorf("start after KillAll: %v", err)
	}
}

// A labelled container of the agent that no executor runs (left by a
// plugin killed with its tasks) is removed before the agent's next task,
// and by ReapAgent at an agent's start; another agent's is left alone.
func TestDockerReapsOrphans(t *testing.T) {
	c := dockerOrSkip(t)
	task := taskFor(t, "reap1", `{"image":"`+probeImage+`","args":["exit","0"]}`, executor.Sandbox{})
	orphan := func(agent string) string {
		t.Helper()
		r, err := c.ContainerCreate(t.Context(), &container.Config{Image: probeImage, Cmd: []string{"sleep"}, Labels: map[string]string{LabelAgent: agent, LabelAttempt: "gone-" + filepath.Base(agent)}}, &container.HostConfig{NetworkMode: "none"}, nil, nil, "")
		if err != nil {
			t.Fatal(err)
		}
		if err := c.ContainerStart(t.Context(), r.ID, container.StartOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.ContainerRemove(context.Background(), r.ID, container.RemoveOptions{Force: true}) })
		return r.ID
	}
	mine := orphan(agentKey(task))
	other := orphan(t.TempDir())
	e := newWith(Options{}, c)
	if err := e.Start(t.Context(), task); err != nil {
		t.Fatal(err)
	}
	waitResult(t, e, task.ID)
	if _, err := c.ContainerInspect(t.Context(), mine); !isGone(err) {
		t.Errorf("the agent's orphan is still there (%v)", err)
	}
	if _, err := c.ContainerInspect(t.Context(), other); err != nil {
		t.Errorf("another agent's container was removed: %v", err)
	}
	again := orphan(agentKey(task))
	ReapAgent(t.Context(), agentKey(task), discardLogger())
	if _, err := c.ContainerInspect(t.Context(), again); !isGone(err) {
		t.Errorf("ReapAgent left the orphan (%v)", err)
	}
}

// image_artifact: a `docker save` archive staged as an input is checked
// against its digest, loaded and run; an archive that does not hash to
// the digest is refused for good before anything is loaded.
func TestDockerImageArtifact(t *testing.T) {
	c := dockerOrSkip(t)
	rc, err := c.ImageSave(t.Context(), []string{probeImage})
	if err != nil {
		t.Fatal(err)
	}
	archive, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(archive)
	digest := hex.EncodeToString(sum[:])
	stage := func(task executor.Task, name string, b []byte) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(task.WorkDir, api.DefaultInputDir), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(task.WorkDir, api.DefaultInputDir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	e := newWith(Options{}, c)
	good := taskFor(t, "art1", `{"image_artifact":"`+digest+`","args":["id","exit","0"]}`, executor.Sandbox{})
	stage(good, digest, archive)
	if err := e.Start(t.Context(), good); err != nil {
		t.Fatal(err)
	}
	stdout, _ := collectLogs(t, e, good.ID)
	if res := waitResult(t, e, good.ID); res.ExitCode != 0 || !strings.Contains(stdout, "uid=4242") {
		t.Errorf("result %+v, output %q", res, stdout)
	}

	wrong := strings.Repeat("0", 64)
	bad := taskFor(t, "art2", `{"image_artifact":"`+wrong+`"}`, executor.Sandbox{})
	stage(bad, wrong, archive)
	err = e.Start(t.Context(), bad)
	if !errors.Is(err, ErrImageDigest) || !executor.IsPermanent(err) {
		t.Errorf("wrong digest: %v, want a permanent ErrImageDigest", err)
	}
	missing := taskFor(t, "art3", `{"image":"gpulayer-no-such-image:never"}`, executor.Sandbox{})
	if err := e.Start(t.Context(), missing); !errors.Is(err, ErrNoImage) || !executor.IsPermanent(err) {
		t.Errorf("missing image: %v, want a permanent ErrNoImage", err)
	}
}

// The executor meets the executor contract (sdk/executor/executortest),
// in process and across go-plugin's gRPC transport, with real containers.
func TestDockerConformance(t *testing.T) {
	c := dockerOrSkip(t)
	args := func(a ...string) []byte {
		b, err := json.Marshal(api.ContainerConfig{Image: probeImage, Args: a})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	executortest.Run(t, executortest.Spec{
		New: func() executor.Executor { return newWith(Options{}, c) },
		Print: func(lines []string) []byte {
			var a []string
			for _, l := range lines {
				a = append(a, "echo", l)
			}
			return args(append(a, "exit", "0")...)
		},
		Block:    func() []byte { return args("sleep") },
		Exit:     func(code int) []byte { return args("exit", strconv.Itoa(code)) },
		PrintEnv: func(key string) []byte { return args("getenv", key) },
		Invalid:  []byte(`{"image":"x","privileged":true}`),
		Timeout:  time.Minute,
	})
}

// BenchmarkDockerStartToEnd measures a task from Start to its result,
// container removed, for a probe that exits at once: the executor's cost
// per task, to set against `docker run --rm` of the same image
// (docs/containers.md, "Start overhead").
func BenchmarkDockerStartToEnd(b *testing.B) {
	e := newWith(Options{}, containertest.DockerOrSkip(b))
	cfg := []byte(`{"image":"` + probeImage + `","args":["exit","0"]}`)
	for i := 0; b.Loop(); i++ {
		id := "bench-" + strconv.Itoa(i)
		if err := e.Start(b.Context(), executor.Task{ID: id, Config: cfg}); err != nil {
			b.Fatal(err)
		}
		if res, err := e.Wait(b.Context(), id); err != nil || res.ExitCode != 0 {
			b.Fatalf("%+v %v", res, err)
		}
	}
}
