package exec

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/gpulayer/gpulayer/internal/cloexec"
)

// initArgs are the arguments the executor starts its own program with to
// make it a sandbox's init (startSandboxed). The init is recognised in a
// package init function, before the program's main runs, so it works in
// whatever program embeds this executor: `gpulayer plugin exec`, a test
// binary.
var initArgs = []string{"gpulayer-task-init", "--gpulayer-sandbox-init-v1"}

func init() {
	if len(os.Args) == len(initArgs) && os.Args[0] == initArgs[0] && os.Args[1] == initArgs[1] && os.Getpid() == 1 {
		os.Exit(runInit())
	}
}

// forwardedSignals are passed on from the init to the task's process
// group: Stop's SIGTERM above all. SIGKILL is not: the executor kills the
// init, and the kernel kills everything in its PID namespace with it.
var forwardedSignals = []os.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2}

// runInit is the sandbox's init, PID 1 of the task's PID namespace and
// alone in its mount namespace (and cgroup), still root. It reads the
// task's spec on fd 3, builds the mounts, brings the loopback of an
// isolated network namespace up, makes sure nothing but fds 0, 1
// and 2 reaches the task, sets no_new_privs, and starts the task's
// process as its user, in a process group of its own. It reports on fd 4
// that the task runs (or what failed), passes signals on to the task's
// group, reaps every orphan of the namespace, and once the task's process
// ends reports how and exits with its status (128+signal for a signal).
// Its exit ends every process left in the namespace.
func runInit() int {
	// no_new_privs is per thread: the one that sets it must be the one
	// that forks the task.
	runtime.LockOSThread()
	rep := reporter{os.NewFile(4, "sandbox-report")}
	specFile := os.NewFile(3, "sandbox-spec")
	var spec initSpec
	err := json.NewDecoder(specFile).Decode(&spec)
	_ = specFile.Close()
	if err != nil {
		return rep.fail("sandbox", fmt.Errorf("read the task's spec: %w", err))
	}
	if err := buildMounts(spec.Plan); err != nil {
		return rep.fail("sandbox", err)
	}
	if spec.Plan.IsolateNetwork {
		if err := loopbackUp(); err != nil {
			return rep.fail("sandbox", err)
		}
	}
	if err := cloexec.Mark(); err != nil {
		return rep.fail("sandbox", fmt.Errorf("close inherited descriptors: %w", err))
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return rep.fail("sandbox", fmt.Errorf("set no_new_privs: %w", err))
	}
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, forwardedSignals...)
	pid, err := syscall.ForkExec(spec.Path, spec.Args, &syscall.ProcAttr{
		Dir:   spec.Dir,
		Env:   spec.Env,
		Files: []uintptr{0, 1, 2},
		Sys:   &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Credential: spec.Cred},
	})
	if err != nil {
		return rep.fail("exec", &os.PathError{Op: "fork/exec", Path: spec.Path, Err: err})
	}
	rep.send(initReport{Started: true})
	go forward(sigs, pid)
	return reap(pid, rep)
}

// forward passes each signal on to the task's process group, or to its
// process if that left the group.
func forward(sigs <-chan os.Signal, pid int) {
	for s := range sigs {
		sig, _ := s.(syscall.Signal)
		if err := syscall.Kill(-pid, sig); err != nil {
			_ = syscall.Kill(pid, sig)
		}
	}
}

// reap waits for every child of the init (the task's process and the
// orphans the namespace hands it) until the task's process ends, and
// reports how.
func reap(pid int, rep reporter) int {
	for {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return rep.fail("sandbox", fmt.Errorf("wait: %w", err))
		}
		if got != pid {
			continue
		}
		r := initReport{Ended: true}
		if ws.Signaled() {
			r.Signal, r.Core = int(ws.Signal()), ws.CoreDump()
			rep.send(r)
			return 128 + r.Signal
		}
		r.Code = ws.ExitStatus()
		rep.send(r)
		return r.Code
	}
}

// reporter writes the init's reports to the executor.
type reporter struct{ w *os.File }

func (r reporter) send(rep initReport) {
	b, _ := json.Marshal(rep)
	_, _ = r.w.Write(append(b, '\n'))
}

// fail reports what failed and returns the init's exit status for it.
func (r reporter) fail(stage string, err error) int {
	r.send(initReport{Stage: stage, Error: err.Error()})
	if stage == "exec" {
		return 127
	}
	return 125
}
