//go:build linux

package agentfaults

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/internal/tailbuf"
)

// agentOpts are what an agent process is started with.
type agentOpts struct {
	ID           string
	Coordinators []string
	JoinToken    string
	Root         string // its data and work dirs go here
	UIDBase      int    // its task uid range (as root)
	MaxTasks     int
	StopGrace    time.Duration
	TaskUser     string // as root: --task-user (every task as this one user)
}

// agentProc is one real `gpulayer agent run` process, restartable on the
// same data dir.
type agentProc struct {
	t    testing.TB
	opts agentOpts

	DataDir, WorkDir string

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
	err    error // how the last life ended, once exited is closed
	asked  bool  // the test ended the last life on purpose
	life   int
	logs   *tailbuf.Buffer // the agent's stderr, every life
	seen   map[int]proc
}

// startAgent starts an agent process until the test ends, when it is
// resumed and stopped with SIGTERM (and killed if that does not work);
// every process it left behind is killed then as well.
func startAgent(t testing.TB, o agentOpts) *agentProc {
	t.Helper()
	a := &agentProc{t: t, opts: o, logs: tailbuf.New(4 << 20), seen: map[int]proc{},
		DataDir: filepath.Join(o.Root, "data-"+o.ID), WorkDir: filepath.Join(o.Root, "work-"+o.ID)}
	if err := os.MkdirAll(a.WorkDir, 0o711); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(a.WorkDir, 0o711); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.cleanup)
	a.start()
	return a
}

func (a *agentProc) args() []string {
	o := a.opts
	args := []string{"agent", "run",
		"--coordinator", strings.Join(o.Coordinators, ","),
		"--data-dir", a.DataDir, "--work-dir", a.WorkDir,
		"--worker-id", o.ID, "--fake-gpus", "dgxh100",
		"--max-tasks", strconv.Itoa(o.MaxTasks), "--stop-grace", o.StopGrace.String(), "--drain-deadline", "5s",
		"--log-level", "info",
		// The tasks' shared directories, under the host's /tmp, which a
		// sandboxed task does not otherwise see.
		"--task-sandbox-keep", taskShareRoot(a.t)}
	switch {
	case os.Geteuid() == 0 && o.TaskUser != "":
		args = append(args, "--task-user", o.TaskUser)
	case os.Geteuid() == 0:
		args = append(args, "--task-uid-base", strconv.Itoa(o.UIDBase))
	default:
		args = append(args, "--allow-shared-user-tasks")
	}
	return args
}

// start begins a new life of the agent on its data dir.
func (a *agentProc) start() {
	a.t.Helper()
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.cmd != nil {
		select {
		case <-a.exited:
		default:
			a.t.Fatalf("agent %s: start while it runs", a.opts.ID)
		}
	}
	a.life++
	cmd := exec.Command(binary, a.args()...)
	cmd.Env = append(os.Environ(), "GPULAYER_JOIN_TOKEN="+a.opts.JoinToken)
	fmt.Fprintf(a.logs, "=== agent %s life %d ===\n", a.opts.ID, a.life)
	cmd.Stderr = a.logs
	cmd.Stdout = a.logs
	if err := cmd.Start(); err != nil {
		a.t.Fatalf("agent %s: %v", a.opts.ID, err)
	}
	exited := make(chan struct{})
	a.cmd, a.exited, a.asked, a.err = cmd, exited, false, nil
	go func() {
		err := cmd.Wait()
		a.mu.Lock()
		a.err = err
		a.mu.Unlock()
		close(exited)
	}()
}

// PID is the agent's process id in its current life.
func (a *agentProc) PID() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.cmd.Process.Pid
}

// running reports whether the current life has not ended.
func (a *agentProc) running() bool {
	a.mu.Lock()
	ch := a.exited
	a.mu.Unlock()
	select {
	case <-ch:
		return false
	default:
		return true
	}
}

// unexpectedExit describes a life that ended without the test asking,
// or "".
func (a *agentProc) unexpectedExit() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	select {
	case <-a.exited:
	default:
		return ""
	}
	if a.asked {
		return ""
	}
	return fmt.Sprintf("agent %s (life %d) exited by itself: %v", a.opts.ID, a.life, a.err)
}

func (a *agentProc) signal(sig syscall.Signal) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if sig == syscall.SIGKILL || sig == syscall.SIGTERM {
		a.asked = true
	}
	return a.cmd.Process.Signal(sig)
}

// Pause and Resume stop and continue the agent process (not its plugins
// or tasks, which keep running, as on a node whose agent hangs).
func (a *agentProc) Pause() error  { return a.signal(syscall.SIGSTOP) }
func (a *agentProc) Resume() error { return a.signal(syscall.SIGCONT) }

// Kill ends the agent with SIGKILL (nothing cleaned up) and waits for it
// to be reaped. It returns the processes that ran below it just before.
func (a *agentProc) Kill() []proc {
	a.t.Helper()
	tree := a.Tree()
	_ = a.signal(syscall.SIGKILL)
	if err := a.waitExit(10 * time.Second); err != nil {
		a.t.Error(err)
	}
	return tree
}

// Life counts the agent's starts.
func (a *agentProc) Life() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.life
}

// Stop ends the agent with SIGTERM, as its supervisor would.
func (a *agentProc) Stop(timeout time.Duration) error {
	a.Tree()
	_ = a.signal(syscall.SIGCONT)
	_ = a.signal(syscall.SIGTERM)
	return a.waitExit(timeout)
}

func (a *agentProc) waitExit(timeout time.Duration) error {
	a.mu.Lock()
	ch := a.exited
	a.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-time.After(timeout):
		return fmt.Errorf("agent %s did not exit within %v", a.opts.ID, timeout)
	}
}

// Tree lists the agent's live descendants: its plugin processes and,
// below them, the tasks' processes. Every process seen is remembered, so
// that cleanup can kill what a life left behind.
func (a *agentProc) Tree() []proc {
	if !a.running() {
		return nil
	}
	ps := descendants(a.PID())
	a.mu.Lock()
	for _, p := range ps {
		a.seen[p.PID] = p
	}
	a.mu.Unlock()
	return ps
}

// Plugins lists the agent's live plugin processes (its direct children
// that serve an executor).
func (a *agentProc) Plugins() []proc {
	if !a.running() {
		return nil
	}
	var out []proc
	for _, p := range children(a.PID()) {
		if isPlugin(p) {
			out = append(out, p)
		}
	}
	return out
}

func isPlugin(p proc) bool {
	f := strings.Fields(p.Cmdline)
	return len(f) >= 3 && filepath.Base(f[0]) == "gpulayer" && f[1] == "plugin"
}

func (a *agentProc) cleanup() {
	if a.running() {
		if err := a.Stop(30 * time.Second); err != nil {
			a.t.Errorf("%v\n%s", err, a.logs.String())
			_ = a.signal(syscall.SIGKILL)
			_ = a.waitExit(10 * time.Second)
		}
	}
	a.mu.Lock()
	seen := make([]proc, 0, len(a.seen))
	for _, p := range a.seen {
		seen = append(seen, p)
	}
	a.mu.Unlock()
	for _, p := range seen {
		killProc(p)
	}
}

// rootDir makes a directory for agents' data and work dirs whose every
// parent task users can search (t.TempDir is 0700).
func rootDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "gpulayer-agentfaults-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o711); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}
