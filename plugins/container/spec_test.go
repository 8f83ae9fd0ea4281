package container

import (
	"errors"
	"log/slog"
	"slices"
	"testing"

	"github.com/docker/docker/api/types/mount"

	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/executor"
)

// The container's sandbox: the task's user, no capabilities,
// no-new-privileges, the sandbox's limits, no network, the task
// directory at its own path, labels; a gang member gets the host network.
func TestContainerConfigSandbox(t *testing.T) {
	task := executor.Task{ID: "att1", TaskID: "t1", JobID: "j1", WorkDir: "/work/tasks/att1", Env: map[string]string{}}
	sb := executor.Sandbox{MemoryBytes: 256 << 20, CPUMillis: 1500, Keep: []string{"/run/mps"}}
	cc, hc := containerConfig(runSpec{Task: task, Config: api.ContainerConfig{Image: "x", Command: []string{"/probe"}, Args: []string{"a"}, ReadOnlyRoot: true}, Image: "sha256:abc", User: "1234:1234", WorkDir: "/work/tasks/att1", Sandbox: sb})
	if cc.User != "1234:1234" || cc.Image != "sha256:abc" || !slices.Equal(cc.Entrypoint, []string{"/probe"}) || !slices.Equal(cc.Cmd, []string{"a"}) {
		t.Errorf("config %+v", cc)
	}
	if cc.Labels[LabelTask] != "t1" || cc.Labels[LabelAttempt] != "att1" || cc.Labels[LabelJob] != "j1" || cc.Labels[LabelAgent] != "/work/tasks" {
		t.Errorf("labels %v", cc.Labels)
	}
	if !slices.Equal(hc.CapDrop, []string{"ALL"}) || len(hc.CapAdd) != 0 || !slices.Equal(hc.SecurityOpt, []string{"no-new-privileges"}) || hc.Privileged {
		t.Errorf("privileges %+v %+v %+v", hc.CapDrop, hc.CapAdd, hc.SecurityOpt)
	}
	if !hc.ReadonlyRootfs || hc.Tmpfs["/tmp"] == "" {
		t.Errorf("read-only root %v tmpfs %v", hc.ReadonlyRootfs, hc.Tmpfs)
	}
	if hc.Memory != 256<<20 || hc.MemorySwap != 256<<20 || hc.NanoCPUs != 1_500_000_000 || hc.PidsLimit == nil || *hc.PidsLimit != executor.DefaultSandboxPids {
		t.Errorf("limits mem %d swap %d cpu %d pids %v", hc.Memory, hc.MemorySwap, hc.NanoCPUs, hc.PidsLimit)
	}
	if hc.NetworkMode != "none" {
		t.Errorf("network %q", hc.NetworkMode)
	}
	want := []mount.Mount{{Type: mount.TypeBind, Source: "/work/tasks/att1", Target: "/work/tasks/att1"}, {Type: mount.TypeBind, Source: "/run/mps", Target: "/run/mps"}}
	if !slices.Equal(hc.Mounts, want) {
		t.Errorf("mounts %+v", hc.Mounts)
	}
	task.Env[gangVar] = "2"
	_, hc = containerConfig(runSpec{Task: task, Sandbox: executor.Sandbox{Pids: -1}})
	if hc.NetworkMode != "host" || hc.PidsLimit != nil {
		t.Errorf("gang member: network %q pids %v", hc.NetworkMode, hc.PidsLimit)
	}
}

// Bad configs are refused as invalid config (permanent), naming the fault.
func TestParseConfigRefuses(t *testing.T) {
	for _, raw := range []string{``, `{}`, `{"image":"x"} {}`, `{"image":"x","cap_add":["SYS_ADMIN"]}`, `{"image":"-x"}`, `{"image":"x","workdir":"../up"}`, `{"image_artifact":"nothex"}`} {
		if _, err := ParseConfig([]byte(raw)); !errors.Is(err, executor.ErrInvalidConfig) {
			t.Errorf("%s: %v, want ErrInvalidConfig", raw, err)
		}
	}
	if _, err := ParseConfig([]byte(`{"image":"train:1","workdir":"/app"}`)); err != nil {
		t.Error(err)
	}
}

// The agent's uid and gid are used; root or half a pair is refused.
func TestIdentity(t *testing.T) {
	u, err := identity(executor.Task{Env: map[string]string{executor.EnvTaskUID: "1500", executor.EnvTaskGID: "1501"}})
	if err != nil || u != "1500:1501" {
		t.Errorf("%q %v", u, err)
	}
	for _, env := range []map[string]string{{executor.EnvTaskUID: "0", executor.EnvTaskGID: "0"}, {executor.EnvTaskUID: "5"}} {
		if _, err := identity(executor.Task{Env: env}); !errors.Is(err, executor.ErrInvalidConfig) {
			t.Errorf("%v: %v", env, err)
		}
	}
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
