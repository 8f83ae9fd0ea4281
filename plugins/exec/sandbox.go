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
	// Hide are covered by an empty read-only directory the task is
	// refused (a file: by one it cannot open).
	Hide []string
	// Keep stay reachable whatever covers them.
	Keep   []string
	Limits cgroupLimits
}

// freshDirs get a tmpfs of the task's own: what one task leaves there the
// next one does not find. They are the directories any user may write to
// on a usual host (mode 1777).
var freshDirs = []string{"/tmp", "/var/tmp", "/dev/shm", "/run/lock"}

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
	p := &sandboxPlan{Fresh: freshDirs, Hide: sb.Hide, Limits: cgroupLimits{MemoryBytes: sb.MemoryBytes, CPUMillis: sb.CPUMillis, Pids: sb.Pids}}
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
