package exec

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	osexec "os/exec"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/gpulayer/gpulayer/sdk/executor"
)

// sandboxUnavailable says why tasks cannot get a sandbox here, or "" when
// they can: new PID and mount namespaces, mounts and cgroups need root
// with CAP_SYS_ADMIN (a container's root usually lacks it).
func sandboxUnavailable() string {
	if geteuid() != 0 {
		return "the exec executor is not root: it cannot make PID and mount namespaces or cgroups"
	}
	return ""
}

// sandboxRefused says why a root executor cannot build the sandbox it is
// asked for, or "" when it can. Unlike a non-root executor (whose agent
// had to be told --allow-shared-user-tasks, and whose tasks were never
// kept apart), a root one hands each task a uid of its own and promises
// the sandbox: lacking CAP_SYS_ADMIN (a container's default root), it
// fails the task instead of running it without one. --no-task-sandbox
// is the operator's explicit way to run such an agent.
func sandboxRefused() string {
	status, err := procStatus()
	if err != nil {
		return "cannot read /proc/self/status to learn this process's capabilities: " + err.Error()
	}
	if !hasCapability(status, capSysAdmin) {
		return "the exec executor runs as root without CAP_SYS_ADMIN (a container without it?), so it cannot build the task's sandbox; give it CAP_SYS_ADMIN, or run the agent with --no-task-sandbox"
	}
	return ""
}

// geteuid and procStatus are what sandboxUnavailable and sandboxRefused
// learn this process's privileges from; tests replace them to play a
// root without CAP_SYS_ADMIN.
var (
	geteuid    = os.Geteuid
	procStatus = func() ([]byte, error) { return os.ReadFile("/proc/self/status") }
)

// hostMemoryBytes is the host's RAM, or 0 when the kernel does not say.
func hostMemoryBytes() int64 {
	var si unix.Sysinfo_t
	if err := unix.Sysinfo(&si); err != nil {
		return 0
	}
	return int64(si.Totalram) * int64(si.Unit)
}

// capSysAdmin is CAP_SYS_ADMIN's bit in a capability set.
const capSysAdmin = 21

// hasCapability reports whether the effective set in a /proc/<pid>/status
// (its CapEff line, in hex) holds capability bit c.
func hasCapability(status []byte, c uint) bool {
	for line := range strings.Lines(string(status)) {
		hex, ok := strings.CutPrefix(line, "CapEff:")
		if !ok {
			continue
		}
		set, err := strconv.ParseUint(strings.TrimSpace(hex), 16, 64)
		return err == nil && set&(1<<c) != 0
	}
	return false
}

// sandboxRun is the executor's side of one sandboxed task: the pipe the
// init reports on and the task's cgroup.
type sandboxRun struct {
	reports *os.File
	dec     *json.Decoder
	cgroup  *taskCgroup
	log     *slog.Logger
}

// startSandboxed starts cmd, the task's process as it would run without a
// sandbox, in one: it starts the sandbox's init instead (this program
// again, initArgs) in new PID, mount and IPC namespaces (System V IPC and
// POSIX message queues of its own, gone with it), and a network namespace
// when the plan isolates the network, puts it in the task's
// cgroup, and hands it cmd's program, arguments, environment, directory
// and user to start once the sandbox is built. It returns once the
// task's process runs. cmd keeps its Stdout and Stderr: the init passes
// them on.
func startSandboxed(cmd *osexec.Cmd, id string, plan *sandboxPlan, log *slog.Logger) (*sandboxRun, error) {
	spec := initSpec{Path: cmd.Path, Args: cmd.Args, Env: cmd.Env, Dir: cmd.Dir, Plan: *plan}
	if cmd.SysProcAttr != nil {
		spec.Cred = cmd.SysProcAttr.Credential
	}
	cg, err := newTaskCgroup(ownedName(plan.Owner, id), plan.Limits)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSandbox, err)
	}
	specR, specW, err := os.Pipe()
	if err != nil {
		_ = cg.remove()
		return nil, err
	}
	repR, repW, err := os.Pipe()
	if err != nil {
		closeAll(specR, specW)
		_ = cg.remove()
		return nil, err
	}
	cmd.Path = "/proc/self/exe"
	cmd.Args = initArgs
	cmd.Env = []string{} // the task's goes through the spec pipe
	cmd.Dir = "/"
	cmd.ExtraFiles = []*os.File{specR, repW} // fds 3 and 4
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Setpgid:    true,
		Pdeathsig:  syscall.SIGKILL, // the plugin dies, the whole sandbox dies
		Cloneflags: sandboxCloneflags(plan),
	}
	err = cmd.Start()
	closeAll(specR, repW)
	sb := &sandboxRun{reports: repR, dec: json.NewDecoder(repR), cgroup: cg, log: log}
	if err != nil {
		closeAll(specW)
		sb.close()
		return nil, fmt.Errorf("%w: start the init: %w", ErrSandbox, err)
	}
	fail := func(err error) (*sandboxRun, error) {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		closeAll(specW)
		sb.close()
		return nil, err
	}
	// The init reads its spec only now: nothing of the task runs outside
	// the cgroup.
	if err := cg.add(cmd.Process.Pid); err != nil {
		return fail(fmt.Errorf("%w: %w", ErrSandbox, err))
	}
	if err := json.NewEncoder(specW).Encode(spec); err != nil {
		return fail(fmt.Errorf("%w: hand the task to the init: %w", ErrSandbox, err))
	}
	closeAll(specW)
	var rep initReport
	if err := sb.dec.Decode(&rep); err != nil {
		return fail(fmt.Errorf("%w: the init ended before the task started: %v", ErrSandbox, err))
	}
	switch {
	case rep.Started:
		return sb, nil
	case rep.Stage == "exec":
		return fail(errors.New(rep.Error))
	default:
		return fail(fmt.Errorf("%w: %s", ErrSandbox, rep.Error))
	}
}

// sandboxCloneflags are the namespaces a task's init starts in.
func sandboxCloneflags(plan *sandboxPlan) uintptr {
	flags := uintptr(syscall.CLONE_NEWPID | syscall.CLONE_NEWNS | syscall.CLONE_NEWIPC)
	if plan.IsolateNetwork {
		flags |= syscall.CLONE_NEWNET
	}
	return flags
}

// end reads how the task ended from the init, once the init is gone, and
// removes the task's cgroup. ok is false when the init said nothing (it
// was killed: the caller goes by how the init ended).
func (sb *sandboxRun) end() (res executor.Result, ok bool) {
	var rep initReport
	for {
		if err := sb.dec.Decode(&rep); err != nil {
			if !errors.Is(err, io.EOF) {
				sb.log.Warn("reading the sandbox init's report", "error", err)
			}
			break
		}
		if rep.Ended {
			res, ok = rep.result(), true
		}
	}
	sb.close()
	return res, ok
}

// close releases the pipe and the cgroup.
func (sb *sandboxRun) close() {
	closeAll(sb.reports)
	if err := sb.cgroup.remove(); err != nil {
		sb.log.Error("removing the task's cgroup", "error", err)
	}
}
