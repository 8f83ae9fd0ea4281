package exec

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	osexec "os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"github.com/gpulayer/gpulayer/sdk/executor"
)

var _ executor.Execer = (*Executor)(nil)

// Exec runs a command in a running task, as the task's user, with its
// environment and directory: inside its sandbox (PID, mount, IPC and
// network namespaces, cgroup, no_new_privs) when it has one.
func (e *Executor) Exec(ctx context.Context, req executor.ExecRequest, streams executor.ExecStreams) (int, error) {
	tk, err := e.tasks.Get(req.ID)
	if err != nil {
		return -1, err
	}
	if tk.reaped.Load() {
		return -1, fmt.Errorf("exec: task %s: %w", req.ID, ErrTaskEnded)
	}
	if len(req.Command) == 0 {
		return -1, errors.New("exec: no command")
	}
	path, err := lookPath(req.Command[0], lookupEnv(tk.as.env, "PATH"))
	if err != nil {
		return -1, err
	}
	nsPid := 0
	var cg *taskCgroup
	if tk.sandbox != nil {
		nsPid, cg = tk.pid, tk.sandbox.cgroup
	}
	spec := execSpec{NSPid: nsPid, Path: path, Args: req.Command, Env: tk.as.env, Dir: tk.as.dir, Cred: tk.as.cred, TTY: req.TTY}
	// The helper is this program again (exechelper_linux.go).
	cmd := &osexec.Cmd{Path: "/proc/self/exe", Args: execHelperArgs, Env: []string{}, Dir: "/",
		SysProcAttr: &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}}
	x, err := wireExec(cmd, req, tk.as.cred)
	if err != nil {
		return -1, err
	}
	defer x.close()
	pid, err := startHelper(cmd, spec, cg)
	if err != nil {
		return -1, err
	}
	x.started()
	ended := make(chan execEnd, 1)
	go func() {
		err := cmd.Wait()
		var exitErr *osexec.ExitError
		if err != nil && !errors.As(err, &exitErr) {
			ended <- execEnd{-1, err}
			return
		}
		ended <- execEnd{cmd.ProcessState.ExitCode(), nil}
	}()
	go x.pump(ctx, streams)
	select {
	case end := <-ended:
		x.drain()
		return end.code, end.err
	case <-ctx.Done():
		killExec(cmd, pid, ended)
		return -1, ctx.Err()
	case <-tk.done:
		// The task ended: its command ends with it. In a sandbox the PID
		// namespace already took it; without one nothing else would, and
		// a command started as the task ended could otherwise outlive
		// the end-of-task kill under a uid the next task gets.
		killExec(cmd, pid, ended)
		return -1, fmt.Errorf("exec: task %s: %w", req.ID, ErrTaskEnded)
	}
}

// killExec kills an exec'd command's session and its helper, and waits
// for the helper.
func killExec(cmd *osexec.Cmd, pid int, ended <-chan execEnd) {
	_ = unix.Kill(-pid, unix.SIGKILL) // the command's session
	_ = cmd.Process.Kill()
	<-ended
}

// startHelper starts the exec helper, puts it in the task's cgroup (cg,
// nil: none) before it reads its spec, hands it spec, and returns the
// command's pid once it runs.
func startHelper(cmd *osexec.Cmd, spec execSpec, cg *taskCgroup) (int, error) {
	specR, specW, err := os.Pipe()
	if err != nil {
		return 0, err
	}
	repR, repW, err := os.Pipe()
	if err != nil {
		closeAll(specR, specW)
		return 0, err
	}
	defer closeAll(specW, repR)
	cmd.ExtraFiles = []*os.File{specR, repW} // fds 3 and 4
	err = cmd.Start()
	closeAll(specR, repW)
	if err != nil {
		return 0, fmt.Errorf("exec: start the helper: %w", err)
	}
	fail := func(err error) (int, error) {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return 0, err
	}
	if err := cg.add(cmd.Process.Pid); err != nil {
		return fail(fmt.Errorf("exec: join the task's cgroup: %w", err))
	}
	if err := json.NewEncoder(specW).Encode(spec); err != nil {
		return fail(fmt.Errorf("exec: hand the helper its spec: %w", err))
	}
	var rep execReport
	if err := json.NewDecoder(repR).Decode(&rep); err != nil {
		return fail(fmt.Errorf("exec: the helper ended before the command started: %w", err))
	}
	if rep.Error != "" {
		return fail(fmt.Errorf("exec: %s", rep.Error))
	}
	return rep.Pid, nil
}

// ErrTaskEnded: the task of an exec has ended.
var ErrTaskEnded = errors.New("the task has ended")

type execEnd struct {
	code int
	err  error
}

// execIO is an exec's plumbing: pipes, or a pseudo-terminal.
type execIO struct {
	tty *os.File // the terminal's master side, or nil
	// ttyMu orders resizes with the terminal's close: a resize reads
	// its descriptor, which a close releases.
	ttyMu                    sync.Mutex
	ttyClosed                bool
	stdinW, stdoutR, stderrR *os.File
	child                    []*os.File // the command's ends, closed once it started
	outDone                  chan struct{}
}

// wireExec gives cmd its standard streams.
func wireExec(cmd *osexec.Cmd, req executor.ExecRequest, cred *syscall.Credential) (*execIO, error) {
	x := &execIO{outDone: make(chan struct{})}
	if req.TTY {
		size := &pty.Winsize{Rows: req.Size.Rows, Cols: req.Size.Cols}
		if size.Rows == 0 || size.Cols == 0 {
			size = &pty.Winsize{Rows: 24, Cols: 80}
		}
		master, slave, err := pty.Open()
		if err != nil {
			return nil, fmt.Errorf("exec: open a terminal: %w", err)
		}
		if err := pty.Setsize(master, size); err != nil {
			closeAll(master, slave)
			return nil, fmt.Errorf("exec: size the terminal: %w", err)
		}
		if cred != nil {
			// The task's user owns its terminal, as a login would.
			_ = slave.Chown(int(cred.Uid), int(cred.Gid))
		}
		cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
		x.tty, x.child = master, []*os.File{slave}
		return x, nil
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW)
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW, outR, outW)
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	x.stdinW, x.stdoutR, x.stderrR = inW, outR, errR
	x.child = []*os.File{inR, outW, errW}
	return x, nil
}

// started closes the command's ends here: its output ends when it does.
func (x *execIO) started() { closeAll(x.child...) }

// pump carries stdin and resizes in, and the output out, until the
// output ends (outDone).
func (x *execIO) pump(ctx context.Context, streams executor.ExecStreams) {
	if x.tty != nil {
		go copyIn(x.tty, streams.Stdin, false)
		go x.resize(ctx, streams.Resize)
		_, _ = io.Copy(streams.Stdout, x.tty) // EIO once the command and its children closed the terminal
		close(x.outDone)
		return
	}
	go copyIn(x.stdinW, streams.Stdin, true)
	errDone := make(chan struct{})
	go func() {
		_, _ = io.Copy(streams.Stderr, x.stderrR)
		close(errDone)
	}()
	_, _ = io.Copy(streams.Stdout, x.stdoutR)
	<-errDone
	close(x.outDone)
}

// drain waits for the output to be delivered once the command ended; a
// process it left behind that holds the output open gets drainGrace,
// then its output is cut.
func (x *execIO) drain() {
	t := time.NewTimer(drainGrace)
	defer t.Stop()
	select {
	case <-x.outDone:
	case <-t.C:
		x.closeTTY()
		for _, f := range []*os.File{x.stdoutR, x.stderrR} {
			if f != nil {
				_ = f.Close()
			}
		}
		<-x.outDone
	}
}

// drainGrace bounds the wait for an exec's output after it ended.
const drainGrace = 2 * time.Second

func (x *execIO) resize(ctx context.Context, sizes <-chan executor.TermSize) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-x.outDone:
			return
		case sz, ok := <-sizes:
			if !ok {
				return
			}
			if sz.Rows > 0 && sz.Cols > 0 {
				x.setSize(sz)
			}
		}
	}
}

// copyIn copies stdin to the command, closing its end at stdin's EOF
// when closeAtEOF (a pipe; a terminal stays open).
func copyIn(dst *os.File, src io.Reader, closeAtEOF bool) {
	if src != nil {
		_, _ = io.Copy(dst, src)
	}
	if closeAtEOF {
		_ = dst.Close()
	}
}

func (x *execIO) close() {
	closeAll(x.child...)
	x.closeTTY()
	for _, f := range []*os.File{x.stdinW, x.stdoutR, x.stderrR} {
		if f != nil {
			_ = f.Close()
		}
	}
}

// setSize resizes the terminal unless it is closed.
func (x *execIO) setSize(sz executor.TermSize) {
	x.ttyMu.Lock()
	defer x.ttyMu.Unlock()
	if !x.ttyClosed {
		_ = pty.Setsize(x.tty, &pty.Winsize{Rows: sz.Rows, Cols: sz.Cols})
	}
}

// closeTTY closes the terminal's master side, once (none: nothing).
func (x *execIO) closeTTY() {
	x.ttyMu.Lock()
	defer x.ttyMu.Unlock()
	if x.tty != nil && !x.ttyClosed {
		x.ttyClosed = true
		_ = x.tty.Close()
	}
}
