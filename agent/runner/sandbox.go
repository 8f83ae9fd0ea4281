package runner

import (
	"math"
	"slices"

	"github.com/gpulayer/gpulayer/sdk/api"

	"github.com/gpulayer/gpulayer/sdk/executor"
)

// SandboxConfig is what the runner asks of every task's sandbox, through
// Task.Env (executor.EnvSandbox): the built-in exec executor, as root on
// Linux, runs each task in PID and mount namespaces and a cgroup of its
// own (docs/security.md, "What a task can reach").
type SandboxConfig struct {
	// Disable asks for no sandbox at all: tasks then see the host's /tmp
	// and processes, and only the end-of-task process scan stops what
	// they leave running.
	Disable bool
	// Hide are host paths no task may see: the agent's data dir, its
	// config, its task uid locks. The work root is always hidden besides
	// (a task sees its own directory in it, no other).
	Hide []string
	// Keep are host paths every task reaches even where a hidden path or
	// its own /tmp covers them (a shared read-only dataset under /tmp,
	// say). A task's MPS pipe directory is kept besides.
	Keep []string
	// MemoryBytes and CPUMillis (thousandths of a CPU) cap each task; 0:
	// no cap. Pids caps its processes and threads; 0:
	// executor.DefaultSandboxPids, negative: no cap.
	MemoryBytes int64
	CPUMillis   int64
	Pids        int64
	// IsolateNetwork gives each task that is not a gang member a network
	// namespace of its own with only its loopback up
	// (executor.SandboxNetworkIsolated): it reaches no port of the host
	// and no abstract Unix socket outside it. Gang members keep the
	// host's network, which NCCL and the rendezvous need between nodes.
	IsolateNetwork bool
	// Owner names this agent to the executor (executor.Sandbox.Owner):
	// the executor names each task's cgroup for it and sweeps only its
	// own agent's leftovers.
	Owner string
}

// sandbox is the sandbox asked for a task given devices, whose MPS pipe
// directory ("" for none) must stay reachable in it, under the job's own
// limits (res, nil for none): where both the agent and the job cap memory
// or CPU, the tighter cap holds. The device files of the GPUs it was not
// given are hidden (Config.FenceDevices). A gang member keeps the host's
// network whatever SandboxConfig.IsolateNetwork says.
func (r *Runner) sandbox(mps string, res *api.Resources, devices []string, gang bool) executor.Sandbox {
	c := r.cfg.Sandbox
	if c.Disable {
		return executor.Sandbox{Disable: true}
	}
	sb := executor.Sandbox{
		Hide:        slices.Clip(c.Hide),
		MemoryBytes: c.MemoryBytes,
		CPUMillis:   c.CPUMillis,
		Pids:        c.Pids,
		Owner:       c.Owner,
	}
	if res != nil {
		sb.MemoryBytes = tighter(sb.MemoryBytes, res.MemoryMiB<<20)
		sb.CPUMillis = tighter(sb.CPUMillis, int64(math.Ceil(res.CPUs*1000)))
	}
	if r.cfg.WorkRoot != "" {
		sb.Hide = append(sb.Hide, r.cfg.WorkRoot)
	}
	if r.cfg.FenceDevices != nil {
		sb.Hide = append(sb.Hide, r.cfg.FenceDevices(devices)...)
	}
	sb.Keep = slices.Clip(c.Keep)
	if mps != "" {
		sb.Keep = append(sb.Keep, mps)
	}
	if c.IsolateNetwork && !gang {
		sb.Network = executor.SandboxNetworkIsolated
	}
	return sb
}

// tighter is the smaller of two caps, 0 (or less) meaning none.
func tighter(a, b int64) int64 {
	switch {
	case a <= 0:
		return max(b, 0)
	case b <= 0:
		return a
	}
	return min(a, b)
}
