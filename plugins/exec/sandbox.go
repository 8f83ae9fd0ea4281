package exec

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/gpulayer/gpulayer/sdk/executor"
)

// ErrSandbox is wrapped by every error that comes from building a task's
// sandbox; the message names the step that failed ("sandbox: mount /tmp:
// operation not permitted"). A task whose sandbox cannot be built does not
// start: there is no fallback to running it without one.
var ErrSandbox = errors.New("sandbox")

// sandboxPlan is what the exec executor builds a task's sandbox from: the
// agent's request (executor.Sandbox) with the task's own directory kept
// and the defaults filled in.
type sandboxPlan struct {
	// Fresh are the directories that get an empty tmpfs of the task's
	// own, writable by all (sticky): /tmp, /var/tmp, /dev/shm, /run/lock.
	Fresh []string
	// FreshBytes bounds each Fresh tmpfs (its size= option, and an inode
	// count to match; freshTmpfsBytes).
	FreshBytes int64
	// Hide are covered by an empty read-only directory the task is
	// refused (a file: by one it cannot open).
	Hide []string
	// Keep stay reachable whatever covers them.
	Keep   []string
	Limits cgroupLimits
	// IsolateNetwork gives the task a network namespace of its own, with
	// only its loopback up (executor.SandboxNetworkIsolated).
	IsolateNetwork bool
	// Owner is the agent the task belongs to (executor.Sandbox.Owner):
	// the task's cgroup is named for it.
	Owner string
}

// freshDirs get a tmpfs of the task's own: what one task leaves there the
// next one does not find. They are the directories any user may write to
// on a usual host (mode 1777).
var freshDirs = []string{"/tmp", "/var/tmp", "/dev/shm", "/run/lock"}

// freshTmpfsBytes is the size of each of a task's fresh tmpfs mounts: the
// smaller of the executor's Options.TmpfsBytes and the task's memory limit
// where either is set (what a task writes there is memory; the memory
// cgroup counts it against the task's limit anyway), else an eighth of
// the host's RAM, rounded down to a MiB (hostRAM; 1 GiB when it cannot
// say), so that the four of them together hold at most half of it, what
// a single tmpfs without a size may hold. Without a size, each of them
// could take half the host's memory.
func freshTmpfsBytes(configured, memoryLimit int64, hostRAM func() int64) int64 {
	switch {
	case configured > 0 && memoryLimit > 0:
		return min(configured, memoryLimit)
	case configured > 0:
		return configured
	case memoryLimit > 0:
		return memoryLimit
	}
	size := int64(defaultFreshBytes)
	if ram := hostRAM(); ram > 0 {
		size = ram / 8 &^ (1<<20 - 1)
	}
	return max(size, minFreshBytes)
}

// defaultFreshBytes is the size of a fresh tmpfs when the host's RAM is
// not known; minFreshBytes the least one gets by default.
const (
	defaultFreshBytes = 1 << 30
	minFreshBytes     = 16 << 20
)

// cgroupLimits are a task's resource limits; 0 means none.
type cgroupLimits struct {
	MemoryBytes int64
	CPUMillis   int64
	Pids        int64
}

// planSandbox decides whether t runs in a sandbox and, if so, in which:
// nil for none (the executor was told not to make one, or cannot on this
// host). dir is the task's resolved working directory.
func (e *Executor) planSandbox(t executor.Task, dir string) (*sandboxPlan, error) {
	sb, _, err := executor.TaskSandbox(t)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", executor.ErrInvalidConfig, err)
	}
	if sb.Disable || e.opts.DisableSandbox {
		return nil, nil
	}
	if why := sandboxUnavailable(); why != "" {
		e.warnNoSandbox.Do(func() {
			e.log().Warn("tasks run WITHOUT a sandbox: no PID or mount namespace, no private /tmp, no cgroup limits; the end-of-task process scan is all that stops what a task leaves running", "reason", why)
		})
		return nil, nil
	}
	if why := sandboxRefused(); why != "" {
		return nil, fmt.Errorf("%w: %s", ErrSandbox, why)
	}
	p := &sandboxPlan{Fresh: freshDirs, Hide: sb.Hide, Limits: cgroupLimits{MemoryBytes: sb.MemoryBytes, CPUMillis: sb.CPUMillis, Pids: sb.Pids},
		IsolateNetwork: sb.Network == executor.SandboxNetworkIsolated, Owner: sb.Owner}
	p.FreshBytes = freshTmpfsBytes(e.opts.TmpfsBytes, sb.MemoryBytes, hostMemoryBytes)
	if p.Limits.Pids == 0 {
		p.Limits.Pids = executor.DefaultSandboxPids
	}
	if p.Limits.Pids < 0 {
		p.Limits.Pids = 0
	}
	for _, k := range append([]string{t.WorkDir, dir}, sb.Keep...) {
		if k != "" {
			p.Keep = append(p.Keep, filepath.Clean(k))
		}
	}
	return p, nil
}

// withoutSandboxVar drops executor.EnvSandbox from env: it is the agent's
// instruction to the executor, not the task's business.
func withoutSandboxVar(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if len(kv) > len(executor.EnvSandbox) && kv[:len(executor.EnvSandbox)+1] == executor.EnvSandbox+"=" {
			continue
		}
		out = append(out, kv)
	}
	return out
}
