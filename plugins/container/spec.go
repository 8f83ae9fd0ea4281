package container

import (
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/versions"

	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/executor"
)

// Labels every container of the executor carries.
const (
	LabelTask    = "gpulayer.task"
	LabelAttempt = "gpulayer.attempt"
	LabelJob     = "gpulayer.job"
	// LabelAgent holds the agent's task root (the directory its task
	// directories are made in): one agent's containers, however many
	// agents share a daemon.
	LabelAgent = "gpulayer.agent"
)

// gangVar is in Task.Env of a gang member (agent/runner's gang env).
const gangVar = "GPULAYER_GANG_SIZE"

// agentKey is the LabelAgent value of t's agent.
func agentKey(t executor.Task) string {
	if t.WorkDir == "" {
		return "none"
	}
	return filepath.Dir(t.WorkDir)
}

// daemonResolvesCDI reports whether a daemon of API version apiVersion
// with CDI spec directories specDirs (empty: CDI not enabled) resolves
// the CDI names of the spec in dir itself: API 1.44 (Docker 25) or later,
// CDI enabled, and dir among its spec directories.
func daemonResolvesCDI(apiVersion string, specDirs []string, dir string) bool {
	if !versions.GreaterThanOrEqualTo(apiVersion, "1.44") {
		return false
	}
	clean := filepath.Clean(dir)
	return slices.ContainsFunc(specDirs, func(d string) bool { return filepath.Clean(d) == clean })
}

// identity is who the task runs as: the uid and gid the agent names, or
// the plugin's own (the agent runs tasks as its own user).
func identity(t executor.Task) (string, error) {
	uid, gid, ok, err := executor.TaskUser(t)
	if err != nil {
		return "", fmt.Errorf("%w: %v", executor.ErrInvalidConfig, err)
	}
	if !ok {
		return fmt.Sprintf("%d:%d", os.Getuid(), os.Getgid()), nil
	}
	return fmt.Sprintf("%d:%d", uid, gid), nil
}

// workingDir is the container's working directory: an absolute config
// workdir is the image's; a relative one lies inside the task directory
// and must resolve, symbolic links followed, inside it; none is the task
// directory.
func workingDir(cfgDir, taskDir string) (string, error) {
	if path.IsAbs(cfgDir) {
		return path.Clean(cfgDir), nil
	}
	if taskDir == "" {
		if cfgDir != "" {
			return "", fmt.Errorf("%w: container config: workdir %q given but the task has no directory", executor.ErrInvalidConfig, cfgDir)
		}
		return "", nil
	}
	root, err := filepath.EvalSymlinks(taskDir)
	if err != nil {
		return "", fmt.Errorf("task directory: %w", err)
	}
	dir, err := filepath.EvalSymlinks(filepath.Join(root, filepath.FromSlash(cfgDir)))
	if err != nil {
		return "", fmt.Errorf("workdir %q: %w", cfgDir, err)
	}
	if rel, err := filepath.Rel(root, dir); err != nil || !filepath.IsLocal(rel) && rel != "." {
		return "", fmt.Errorf("%w: container config: workdir %q resolves to %s, outside the task's directory", executor.ErrInvalidConfig, cfgDir, dir)
	}
	return filepath.Join(taskDir, filepath.FromSlash(cfgDir)), nil
}

// taskEnv is the container's environment besides the image's: the
// config's env, then the GPU devices' CDI env (when applied here), then
// Task.Env without the agent's instructions to the executor, later
// entries winning.
func taskEnv(cfg api.ContainerConfig, gpu gpuPlan, t executor.Task) []string {
	m := maps.Clone(cfg.Env)
	if m == nil {
		m = map[string]string{}
	}
	for _, kv := range gpu.Env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	maps.Copy(m, t.Env)
	for _, k := range []string{executor.EnvSandbox, executor.EnvCDIDevices, executor.EnvCDIDir} {
		delete(m, k)
	}
	out := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, k+"="+m[k])
	}
	return out
}

// runSpec is everything a container is created from.
type runSpec struct {
	Task    executor.Task
	Config  api.ContainerConfig
	Image   string // the image id to run
	User    string // uid:gid
	WorkDir string
	Sandbox executor.Sandbox
	GPU     gpuPlan
}

// containerConfig builds the container's config and host config: the
// sandbox (table in docs/containers.md) and the task's GPUs.
func containerConfig(s runSpec) (*container.Config, *container.HostConfig) {
	t := s.Task
	cc := &container.Config{
		Image:      s.Image,
		User:       s.User,
		Env:        taskEnv(s.Config, s.GPU, t),
		WorkingDir: s.WorkDir,
		Labels: map[string]string{
			LabelTask:    t.TaskID,
			LabelAttempt: t.ID,
			LabelJob:     t.JobID,
			LabelAgent:   agentKey(t),
		},
	}
	if len(s.Config.Command) > 0 {
		cc.Entrypoint = slices.Clone(s.Config.Command)
	}
	if len(s.Config.Args) > 0 {
		cc.Cmd = slices.Clone(s.Config.Args)
	}
	network := "none"
	if _, gang := t.Env[gangVar]; gang {
		network = "host" // NCCL between gang members (docs/containers.md)
	}
	hc := &container.HostConfig{
		NetworkMode:    container.NetworkMode(network),
		CapDrop:        []string{"ALL"},
		SecurityOpt:    []string{"no-new-privileges"},
		ReadonlyRootfs: s.Config.ReadOnlyRoot,
		IpcMode:        container.IPCModePrivate,
	}
	if s.Config.ReadOnlyRoot {
		hc.Tmpfs = map[string]string{"/tmp": "rw,nosuid,nodev,mode=1777"}
	}
	if t.WorkDir != "" {
		hc.Mounts = append(hc.Mounts, mount.Mount{Type: mount.TypeBind, Source: t.WorkDir, Target: t.WorkDir})
	}
	for _, k := range s.Sandbox.Keep {
		hc.Mounts = append(hc.Mounts, mount.Mount{Type: mount.TypeBind, Source: k, Target: k})
	}
	sb := s.Sandbox
	if sb.MemoryBytes > 0 {
		hc.Memory = sb.MemoryBytes
		hc.MemorySwap = sb.MemoryBytes // no swap beyond the limit
	}
	if sb.CPUMillis > 0 {
		hc.NanoCPUs = sb.CPUMillis * 1_000_000
	}
	pids := sb.Pids
	if pids == 0 {
		pids = executor.DefaultSandboxPids
	}
	if pids > 0 {
		hc.PidsLimit = &pids
	}
	s.GPU.apply(hc)
	return cc, hc
}
