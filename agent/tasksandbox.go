package agent

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/gpulayer/gpulayer/agent/runner"
	"github.com/gpulayer/gpulayer/sdk/executor"
)

// DefaultConfigDir is where the agent's config file lives unless told
// otherwise (gpulayer agent run --config /etc/gpulayer/agent.toml); no
// task sees it.
const DefaultConfigDir = "/etc/gpulayer"

// taskSandbox is what the runner asks of every task's sandbox: cfg's
// TaskSandbox, with the agent's own files hidden besides (its data dir,
// holding the worker credential; its config dir; its task uid locks).
// The runner hides the work root itself.
func (a *Agent) taskSandbox() runner.SandboxConfig {
	sb := a.cfg.TaskSandbox
	sb.Hide = slices.Concat(sb.Hide, []string{a.cfg.DataDir, DefaultConfigDir, cmp.Or(a.cfg.TaskUIDLockDir, DefaultTaskUIDLockDir)})
	sb.Owner = sandboxOwner(a.cfg.DataDir)
	return sb
}

// sandboxOwner names this agent to its executors (runner.SandboxConfig.
// Owner): from its data dir, which no two agents on a host share and
// which stays the same across its restarts, so that an agent's executor
// sweeps the task cgroups its own earlier run left, and never those of
// another agent on the same host.
func sandboxOwner(dataDir string) string {
	if abs, err := filepath.Abs(dataDir); err == nil {
		dataDir = abs
	}
	sum := sha256.Sum256([]byte(filepath.Clean(dataDir)))
	return "agent-" + hex.EncodeToString(sum[:8])
}

// sandboxSummary says in a few words what the task sandbox is asked for,
// for the agent's start-up log. Whether the executor can make it shows in
// its own log (the exec executor warns when it cannot: not root).
func sandboxSummary(sb runner.SandboxConfig) string {
	if sb.Disable {
		return "disabled (--no-task-sandbox): tasks see the host's /tmp and processes"
	}
	network := "host's network"
	if sb.IsolateNetwork {
		network = "own network (loopback only; gang members: host's)"
	}
	return fmt.Sprintf("pid+mount namespaces, private /tmp /var/tmp /dev/shm, %s, hidden %v, memory %s, cpu %s, pids %s",
		network, sb.Hide, limitWord(sb.MemoryBytes, "bytes"), limitWord(sb.CPUMillis, "millicpus"), pidsWord(sb.Pids))
}

func limitWord(n int64, unit string) string {
	if n <= 0 {
		return "unlimited"
	}
	return fmt.Sprintf("%d %s", n, unit)
}

func pidsWord(n int64) string {
	switch {
	case n < 0:
		return "unlimited"
	case n == 0:
		return fmt.Sprint(executor.DefaultSandboxPids)
	}
	return fmt.Sprint(n)
}
