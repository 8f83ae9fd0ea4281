package exec

import (
	"errors"
	"fmt"
	"io"
	"os"
	osexec "os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gpulayer/gpulayer/internal/cloexec"
	"github.com/gpulayer/gpulayer/sdk/executor"
	"github.com/gpulayer/gpulayer/sdk/executor/logbuf"
)

// task is one running or ended process. In a sandbox, the process the
// executor starts, waits for and signals is the sandbox's init: pid is
// the init's, and the task's own process is its child.
type task struct {
	id       string
	pid      int
	cmd      *osexec.Cmd
	sandbox  *sandboxRun // nil: the task runs without a sandbox
	logs     *logbuf.Buffer
	stdout   *os.File // read ends of the output pipes
	stderr   *os.File
	readers  sync.WaitGroup
	stopping atomic.Bool
	reaped   atomic.Bool   // the process is gone: its pid may be reused
	done     chan struct{} // closed once result is set and output drained
	result   executor.Result
	// as is who and where the task runs, for exec (execin_linux.go).
	as execIdentity
}

// execIdentity is what a command exec'd into a task runs as: the task's
// user, environment and directory.
type execIdentity struct {
	cred *syscall.Credential
	env  []string
	dir  string
}

// Done and Result make a task a tasktable.Task.
func (tk *task) Done() <-chan struct{}   { return tk.done }
func (tk *task) Result() executor.Result { return tk.result }

// startTask starts the process for t: in a sandbox of its own unless the
// executor does not make one (planSandbox).
func (e *Executor) startTask(t executor.Task, cfg Config) (*task, error) {
	attr, err := sysProcAttr(t)
	if err != nil {
		return nil, err
	}
	dir, err := workingDir(cfg.Dir, t.WorkDir)
	if err != nil {
		return nil, err
	}
	plan, err := e.planSandbox(t, dir)
	if err != nil {
		return nil, err
	}
	env := withoutSandboxVar(buildEnv(baseEnv(executor.Environ()), homeDefaults(t.WorkDir), cfg.Env, t.Env))
	path, err := lookPath(cfg.Command, lookupEnv(env, "PATH"))
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("stdout pipe: %w", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(outR, outW)
		return nil, fmt.Errorf("stderr pipe: %w", err)
	}
	cmd := &osexec.Cmd{
		Path:        path,
		Args:        append([]string{cfg.Command}, cfg.Args...),
		Env:         env,
		Dir:         dir,
		Stdout:      outW,
		Stderr:      errW,
		SysProcAttr: attr,
	}
	var sb *sandboxRun
	if plan != nil {
		// What a plugin killed with SIGKILL left behind goes first.
		e.sweepOnce(plan.Owner)
		sb, err = startSandboxed(cmd, t.ID, plan, e.log())
	} else {
		// A descriptor the plugin inherited without close-on-exec would
		// reach the task (the sandbox's init closes them itself).
		if err := cloexec.Mark(); err != nil {
			e.log().Warn("marking inherited descriptors close-on-exec", "error", err)
		}
		err = cmd.Start()
	}
	closeAll(outW, errW) // the child holds its own copies
	if err != nil {
		closeAll(outR, errR)
		return nil, err
	}
	tk := &task{
		id:      t.ID,
		pid:     cmd.Process.Pid,
		cmd:     cmd,
		sandbox: sb,
		logs:    logbuf.New(e.opts.LogLimit),
		stdout:  outR,
		stderr:  errR,
		done:    make(chan struct{}),
		as:      execIdentity{cred: attr.Credential, env: env, dir: dir},
	}
	tk.readers.Add(2)
	go tk.copy("stdout", outR)
	go tk.copy("stderr", errR)
	return tk, nil
}

func closeAll(fs ...*os.File) {
	for _, f := range fs {
		_ = f.Close()
	}
}

// copy moves one output stream into the log buffer until EOF.
func (tk *task) copy(stream string, r io.Reader) {
	defer tk.readers.Done()
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			tk.logs.Write(stream, buf[:n])
		}
		if err != nil {
			return
		}
	}
}

// wait blocks until the process ends, kills what is left of its group,
// drains its output and sets the result. Called once, by reap, which
// then closes done.
func (tk *task) wait(drain time.Duration) executor.Result {
	waitErr := tk.cmd.Wait()
	// Whatever the main process left behind in its group goes with it.
	_ = signalGroup(tk.pid, sigKill)
	tk.reaped.Store(true)

	drained := make(chan struct{})
	go func() {
		tk.readers.Wait()
		close(drained)
	}()
	timer := time.NewTimer(drain)
	select {
	case <-drained:
		timer.Stop()
	case <-timer.C:
		// A process outside the group still holds the pipes open.
		closeAll(tk.stdout, tk.stderr)
		<-drained
		tk.logs.Write("stderr", []byte("[gpulayer: output closed: a process that left the task's process group still held it open]\n"))
	}
	closeAll(tk.stdout, tk.stderr)

	tk.result = resultOf(tk.cmd.ProcessState, waitErr, tk.stopping.Load())
	if tk.sandbox != nil {
		// The init's exit status stands for the task's, but only the
		// init's report says whether a signal killed the task.
		if res, ok := tk.sandbox.end(); ok {
			tk.result = stopped(res, tk.stopping.Load())
		}
	}
	tk.logs.Close()
	return tk.result
}

// stop sends SIGTERM to the group now and arms a SIGKILL for when grace
// has passed. Each call arms its own timer, so a later Stop with a
// shorter grace still forces the end sooner.
func (tk *task) stop(grace time.Duration) {
	if tk.reaped.Load() {
		return
	}
	tk.stopping.Store(true)
	tk.signal(sigTerm)
	if grace <= 0 {
		tk.signal(sigKill)
		return
	}
	go func() {
		timer := time.NewTimer(grace)
		defer timer.Stop()
		select {
		case <-tk.done:
		case <-timer.C:
			tk.signal(sigKill)
		}
	}()
}

// signal signals the task's process group unless it is already gone.
func (tk *task) signal(sig syscall.Signal) {
	if !tk.reaped.Load() {
		_ = signalGroup(tk.pid, sig)
	}
}

// resultOf turns how the process ended into a Result.
func resultOf(state *os.ProcessState, waitErr error, stopping bool) executor.Result {
	var exitErr *osexec.ExitError
	if waitErr != nil && !errors.As(waitErr, &exitErr) || state == nil {
		return executor.Result{ExitCode: -1, Reason: fmt.Sprintf("waiting for the process failed: %v", waitErr)}
	}
	return stopped(exitResult(state), stopping)
}

// stopped marks the result of a task that Stop or KillAll ended.
func stopped(res executor.Result, stopping bool) executor.Result {
	if stopping {
		if res.Reason == "" {
			res.Reason = "stopped"
		} else {
			res.Reason = "stopped: " + res.Reason
		}
	}
	return res
}
