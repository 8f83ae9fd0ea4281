package exec

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/gpulayer/gpulayer/internal/cloexec"
)

// execHelperArgs are the arguments the executor starts its own program
// with to enter a task's namespaces for an exec (Exec). Like the
// sandbox's init, it is recognised in a package init function.
//
// A helper process, not a thread of the plugin: a thread that joined a
// task's namespaces can never be given back to the runtime, and a thread
// that ends delivers the parent-death signal of every process it once
// started, the sandboxes' inits among them.
var execHelperArgs = []string{"gpulayer-task-exec", "--gpulayer-exec-helper-v1"}

func init() {
	if len(os.Args) == len(execHelperArgs) && os.Args[0] == execHelperArgs[0] && os.Args[1] == execHelperArgs[1] {
		os.Exit(runExecHelper())
	}
}

// execSpec is what the executor hands the helper on fd 3.
type execSpec struct {
	// NSPid is the process whose namespaces the command joins (0: none).
	NSPid int
	Path  string
	Args  []string
	Env   []string
	Dir   string
	Cred  *syscall.Credential
	TTY   bool
}

// execReport is what the helper answers on fd 4: the command's pid (as
// the executor sees it) once it started, or why it did not.
type execReport struct {
	Pid   int    `json:",omitempty"`
	Error string `json:",omitempty"`
}

// runExecHelper reads its spec, joins the namespaces, starts the command
// as the task's user with no_new_privs in a session of its own (its
// terminal the controlling one with a TTY), reports its pid, and exits
// with its status (128+signal for a signal).
func runExecHelper() int {
	runtime.LockOSThread() // the namespaces and no_new_privs are this thread's
	rep := os.NewFile(4, "exec-report")
	fail := func(err error) int {
		b, _ := json.Marshal(execReport{Error: err.Error()})
		_, _ = rep.Write(append(b, '\n'))
		return 126
	}
	specFile := os.NewFile(3, "exec-spec")
	var spec execSpec
	err := json.NewDecoder(specFile).Decode(&spec)
	_ = specFile.Close()
	if err != nil {
		return fail(fmt.Errorf("read the exec's spec: %w", err))
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fail(fmt.Errorf("no_new_privs: %w", err))
	}
	if err := joinNamespaces(spec.NSPid); err != nil {
		return fail(err)
	}
	// Nothing but fds 0, 1 and 2 reaches the command.
	if err := cloexec.Mark(); err != nil {
		return fail(fmt.Errorf("close inherited descriptors: %w", err))
	}
	pid, err := syscall.ForkExec(spec.Path, spec.Args, &syscall.ProcAttr{
		Dir: spec.Dir, Env: spec.Env, Files: []uintptr{0, 1, 2},
		Sys: &syscall.SysProcAttr{Setsid: true, Setctty: spec.TTY, Ctty: 0, Credential: spec.Cred},
	})
	if err != nil {
		return fail(&os.PathError{Op: "fork/exec", Path: spec.Path, Err: err})
	}
	b, _ := json.Marshal(execReport{Pid: pid})
	_, _ = rep.Write(append(b, '\n'))
	_ = rep.Close()
	for {
		var ws syscall.WaitStatus
		_, err := syscall.Wait4(pid, &ws, 0, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return 126
		}
		if ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ws.ExitStatus()
	}
}

// taskNamespaces are the namespaces of a sandboxed task's init that an
// exec'd command joins, in the order joined.
var taskNamespaces = []struct {
	name string
	flag int
}{
	{"ipc", unix.CLONE_NEWIPC},
	{"net", unix.CLONE_NEWNET},
	{"pid", unix.CLONE_NEWPID},
	{"mnt", unix.CLONE_NEWNS},
}

// joinNamespaces moves the calling thread into pid's namespaces (none
// for pid 0). A mount namespace refuses a thread that shares its file
// system attributes, as every thread of a Go program does: they are
// unshared first.
func joinNamespaces(pid int) error {
	if pid == 0 {
		return nil
	}
	if err := unix.Unshare(unix.CLONE_FS); err != nil {
		return fmt.Errorf("unshare the file system attributes: %w", err)
	}
	for _, ns := range taskNamespaces {
		f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/ns/" + ns.name)
		if err != nil {
			return fmt.Errorf("the task's %s namespace: %w", ns.name, err)
		}
		err = unix.Setns(int(f.Fd()), ns.flag)
		_ = f.Close()
		if err != nil {
			return fmt.Errorf("enter the task's %s namespace: %w", ns.name, err)
		}
	}
	return nil
}
