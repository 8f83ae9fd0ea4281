package executor

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// EnvSandbox names, in Task.Env, the sandbox the agent asks a task to run
// in: a JSON Sandbox. It is an instruction to the executor, not part of
// the task's environment: an executor that honours it removes it from the
// environment it gives the task. An executor that cannot build a sandbox
// ignores it (the built-in exec executor says which, docs/security.md).
const EnvSandbox = "GPULAYER_SANDBOX"

// DefaultSandboxPids is the process (thread) limit of a sandboxed task
// when the agent names none.
const DefaultSandboxPids = 4096

// The networks a sandboxed task may be given (Sandbox.Network).
const (
	// SandboxNetworkHost shares the host's network namespace: every
	// port of the host and every abstract Unix socket is reachable (a
	// firewall rule, not the sandbox, keeps tasks off the coordinator's
	// Raft port). It is what "" means.
	SandboxNetworkHost = "host"
	// SandboxNetworkIsolated gives the task a network namespace of its
	// own with only its loopback up: no host port, no other task's port,
	// no abstract Unix socket outside it, and no way out.
	SandboxNetworkIsolated = "isolated"
)

// Sandbox is what the agent asks of a task's sandbox. Its zero value asks
// for the executor's defaults: a sandbox when the executor can make one,
// hiding nothing beyond fresh /tmp, /var/tmp and /dev/shm, and
// DefaultSandboxPids.
type Sandbox struct {
	// Disable runs the task without a sandbox (the agent was told to).
	Disable bool `json:"disable,omitempty"`
	// Hide are absolute paths of the host the task must not see (the
	// agent's data dir, its config, the root of the task directories):
	// each is covered by an empty read-only directory that a task user
	// is refused (a file by one it cannot open). Keep paths below one
	// stay reachable.
	Hide []string `json:"hide,omitempty"`
	// Keep are absolute paths that stay reachable whatever covers them
	// (a hidden parent, a fresh /tmp): the task's own directory always
	// is; an MPS pipe directory under /tmp is one to name here.
	Keep []string `json:"keep,omitempty"`
	// MemoryBytes caps the memory of the task's processes; 0: none.
	MemoryBytes int64 `json:"memory_bytes,omitempty"`
	// CPUMillis caps the task's CPU time, in thousandths of a CPU (1500:
	// one and a half CPUs); 0: none.
	CPUMillis int64 `json:"cpu_millis,omitempty"`
	// Pids caps the task's processes and threads; 0: DefaultSandboxPids,
	// negative: none.
	Pids int64 `json:"pids,omitempty"`
	// Network is the task's network: SandboxNetworkHost (or "") or
	// SandboxNetworkIsolated.
	Network string `json:"network,omitempty"`
	// Owner names the agent the task belongs to, the same across that
	// agent's restarts and different for each agent on a host: up to
	// MaxSandboxOwner letters, digits and '-'. An executor names what it
	// makes on the host for the task (its cgroup) for the owner, and
	// clears away only its own owner's leftovers, never another agent's.
	Owner string `json:"owner,omitempty"`
}

// MaxSandboxOwner bounds Sandbox.Owner.
const MaxSandboxOwner = 64

// ErrBadSandbox is returned by TaskSandbox for an EnvSandbox value that
// is not a usable Sandbox.
var ErrBadSandbox = errors.New("executor: bad sandbox")

// TaskSandbox returns the sandbox Task.Env asks for; ok is false when it
// asks for none in particular (the executor's defaults then apply). It
// reads Task.Env only, never a job's config.
func TaskSandbox(t Task) (sb Sandbox, ok bool, err error) {
	raw, has := t.Env[EnvSandbox]
	if !has {
		return Sandbox{}, false, nil
	}
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&sb); err != nil {
		return Sandbox{}, false, fmt.Errorf("%w: %s: %v", ErrBadSandbox, EnvSandbox, err)
	}
	for _, p := range append(append([]string(nil), sb.Hide...), sb.Keep...) {
		if !filepath.IsAbs(p) || strings.ContainsRune(p, 0) || filepath.Clean(p) == "/" {
			return Sandbox{}, false, fmt.Errorf("%w: %s: path %q is not an absolute path below /", ErrBadSandbox, EnvSandbox, p)
		}
	}
	if sb.MemoryBytes < 0 || sb.CPUMillis < 0 {
		return Sandbox{}, false, fmt.Errorf("%w: %s: negative memory or CPU limit", ErrBadSandbox, EnvSandbox)
	}
	if !validOwner(sb.Owner) {
		return Sandbox{}, false, fmt.Errorf("%w: %s: owner %q is not up to %d letters, digits and '-'", ErrBadSandbox, EnvSandbox, sb.Owner, MaxSandboxOwner)
	}
	switch sb.Network {
	case "", SandboxNetworkHost, SandboxNetworkIsolated:
	default:
		return Sandbox{}, false, fmt.Errorf("%w: %s: network %q is neither %q nor %q", ErrBadSandbox, EnvSandbox, sb.Network, SandboxNetworkHost, SandboxNetworkIsolated)
	}
	return sb, true, nil
}

// Encode returns sb as the value of EnvSandbox.
func (sb Sandbox) Encode() string {
	b, err := json.Marshal(sb)
	if err != nil { // a struct of strings and numbers always encodes
		panic(err)
	}
	return string(b)
}

// validOwner reports whether owner is empty or a usable Sandbox.Owner.
func validOwner(owner string) bool {
	if len(owner) > MaxSandboxOwner {
		return false
	}
	for _, c := range owner {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}
