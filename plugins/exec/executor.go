package exec

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/gpulayer/gpulayer/sdk/executor"
	"github.com/gpulayer/gpulayer/sdk/executor/logbuf"
	"github.com/gpulayer/gpulayer/sdk/executor/tasktable"
)

// Name is the executor's name, as jobs and the plugin registry spell it.
const Name = "exec"

// Version is reported by Info.
const Version = "1.0.0"

// ErrKilled is wrapped by the error of a Start after KillAll.
var ErrKilled = errors.New("exec: the executor killed its tasks and takes no more")

// Options tune an Executor. The zero value is usable.
type Options struct {
	// Logger receives the executor's own logs; nil means slog.Default()
	// at the time of each record (executor.Serve replaces the default in
	// a plugin process, after the executor is built).
	Logger *slog.Logger
	// LogLimit caps the output kept per task in bytes; zero means
	// logbuf.DefaultLimit (8 MiB).
	LogLimit int
	// MaxEnded is how many ended tasks are remembered for Wait and Logs;
	// zero means 128. Running tasks are never forgotten.
	MaxEnded int
	// DrainTimeout bounds how long, after a task's process group is gone,
	// the executor waits for its output pipes to close (a process that
	// left the group can hold them open); zero means 5 seconds.
	DrainTimeout time.Duration
	// DisableSandbox runs every task without a sandbox, as a task whose
	// Task.Env asks for none (executor.Sandbox.Disable) runs: no PID or
	// mount namespace, no cgroup. Without it a task runs in one wherever
	// the executor can make one (Linux, as root; sandbox_linux.go), and
	// a sandbox that cannot be made fails the task's Start.
	DisableSandbox bool
	// TmpfsBytes bounds each of the empty tmpfs mounts a sandboxed task
	// gets on /tmp, /var/tmp, /dev/shm and /run/lock (writing past it
	// fails with ENOSPC), and a task's memory limit bounds them too;
	// zero with no memory limit means an eighth of the host's RAM each
	// (freshTmpfsBytes in sandbox.go).
	TmpfsBytes int64
}

// Executor runs tasks as local processes. It is safe for concurrent use
// and runs any number of tasks at once.
type Executor struct {
	opts  Options
	tasks *tasktable.Table[*task] // KillAll closes it: no task starts any more

	warnNoSandbox sync.Once // the warning that tasks run without a sandbox
	sweepMu       sync.Mutex
	swept         map[string]bool // the owners sweepStaleCgroups ran for
}

var _ executor.Executor = (*Executor)(nil)

// New returns an Executor.
func New(opts Options) *Executor {
	if opts.LogLimit <= 0 {
		opts.LogLimit = logbuf.DefaultLimit
	}
	if opts.MaxEnded <= 0 {
		opts.MaxEnded = 128
	}
	if opts.DrainTimeout <= 0 {
		opts.DrainTimeout = 5 * time.Second
	}
	return &Executor{opts: opts, tasks: tasktable.New[*task](Name, opts.MaxEnded)}
}

func (e *Executor) log() *slog.Logger {
	l := e.opts.Logger
	if l == nil {
		l = slog.Default()
	}
	return l.With("component", "executor", "executor", Name)
}

// Info implements executor.Executor.
func (e *Executor) Info(context.Context) (executor.Info, error) {
	return executor.Info{Name: Name, Version: Version}, nil
}

// Start implements executor.Executor. It returns once the process runs;
// a config it cannot use wraps executor.ErrInvalidConfig, and a program
// that cannot be started is reported as an error.
func (e *Executor) Start(_ context.Context, t executor.Task) error {
	cfg, err := ParseConfig(t.Config)
	if err != nil {
		return fmt.Errorf("exec: start task %s: %w", t.ID, err)
	}
	if err := e.tasks.Reserve(t.ID); err != nil {
		return fmt.Errorf("exec: start task %s: %w", t.ID, err)
	}
	tk, err := e.startTask(t, cfg)
	killed := e.tasks.Settle(t.ID, tk, err == nil)
	if err != nil {
		return fmt.Errorf("exec: start task %s: %w", t.ID, err)
	}
	if killed {
		// KillAll ran while this one started: it goes the same way.
		tk.signal(sigKill)
	}
	e.log().Debug("task started", "attempt_id", t.ID, "task_id", t.TaskID, "job_id", t.JobID, "pid", tk.pid)
	go e.reap(tk)
	return nil
}

// reap waits for a task to end, records it as ended, forgets the oldest
// ended tasks beyond MaxEnded, and then releases the task's waiters.
func (e *Executor) reap(tk *task) {
	res := tk.wait(e.opts.DrainTimeout)
	e.log().Debug("task ended", "attempt_id", tk.id, "exit_code", res.ExitCode, "reason", res.Reason)
	e.tasks.Ended(tk.id)
	close(tk.done)
}

// Wait implements executor.Executor.
func (e *Executor) Wait(ctx context.Context, id string) (executor.Result, error) {
	return e.tasks.Wait(ctx, id)
}

// Stop implements executor.Executor: SIGTERM to the task's process group
// now, SIGKILL once grace has passed (even if ctx ends first). It returns
// when the task has ended, or ctx's error.
func (e *Executor) Stop(ctx context.Context, id string, grace time.Duration) error {
	tk, err := e.tasks.Get(id)
	if err != nil {
		return err
	}
	tk.stop(grace)
	return tasktable.Ended(ctx, tk)
}

// Logs implements executor.Executor.
func (e *Executor) Logs(ctx context.Context, id string, send func(executor.LogChunk) error) error {
	tk, err := e.tasks.Get(id)
	if err != nil {
		return err
	}
	return tk.logs.Follow(ctx, send)
}

// KillAll kills the process group of every task still running with
// SIGKILL, at once, and makes every later Start fail with ErrKilled. It is
// for a plugin process about to exit without its agent (see
// plugins.ServeBuiltin): a task's main process dies with the plugin
// anyway (Pdeathsig), but what it started in its group would be left
// running, holding its GPUs, while the task is handed out again. A
// sandboxed task is killed whole (its init, and with it its PID
// namespace).
//
// It returns once the signals are sent and the sandboxed tasks are
// reaped, so that their cgroups are removed before the plugin exits; it
// waits for that at most killAllReap.
func (e *Executor) KillAll() {
	tks := e.tasks.Close(ErrKilled)
	for _, tk := range tks {
		tk.stopping.Store(true)
		tk.signal(sigKill)
	}
	timeout := time.NewTimer(killAllReap)
	defer timeout.Stop()
	for _, tk := range tks {
		if tk.sandbox == nil {
			continue
		}
		select {
		case <-tk.done:
		case <-timeout.C:
			e.log().Warn("tasks not reaped in time after KillAll; their cgroups may be left", "waited", killAllReap)
			return
		}
	}
}

// killAllReap bounds how long KillAll waits for sandboxed tasks to be
// reaped.
const killAllReap = 2 * time.Second

// sweepOnce runs sweepStaleCgroups for owner, the first time a task of
// owner's gets a sandbox: what a plugin of the same agent killed with
// SIGKILL left behind goes before the first new cgroup.
func (e *Executor) sweepOnce(owner string) {
	e.sweepMu.Lock()
	defer e.sweepMu.Unlock()
	if e.swept[owner] {
		return
	}
	if e.swept == nil {
		e.swept = map[string]bool{}
	}
	e.swept[owner] = true
	sweepStaleCgroups(e.log(), owner)
}
