// Package proc starts the benchmark's child processes (coordinators, the
// plain HTTP reference server, raw Raft nodes) and reads what the kernel
// knows about them: CPU time and resident memory from /proc.
package proc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Spec describes a child process.
type Spec struct {
	Name string
	Exe  string
	Args []string
	// Stdout and Stderr receive the child's output (nil discards it).
	Stdout io.Writer
	Stderr io.Writer
	// Stdin, when set, gives the child a pipe; CloseStdin tells a child
	// that waits for EOF to finish.
	Stdin bool
	// Env is added to this process's environment for the child.
	Env []string
}

// Child is a running child process.
type Child struct {
	Name  string
	cmd   *exec.Cmd
	stdin io.WriteCloser
	done  chan struct{}

	mu  sync.Mutex
	err error
}

// Start launches a child. It is killed when ctx ends, and (on Linux) when
// this process dies.
func Start(ctx context.Context, s Spec) (*Child, error) {
	cmd := exec.CommandContext(ctx, s.Exe, s.Args...)
	cmd.Stdout, cmd.Stderr = s.Stdout, s.Stderr
	if len(s.Env) > 0 {
		cmd.Env = append(os.Environ(), s.Env...)
	}
	cmd.SysProcAttr = sysProcAttr()
	cmd.WaitDelay = 5 * time.Second
	c := &Child{Name: s.Name, cmd: cmd, done: make(chan struct{})}
	if s.Stdin {
		w, err := cmd.StdinPipe()
		if err != nil {
			return nil, err
		}
		c.stdin = w
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", s.Name, err)
	}
	go func() {
		err := cmd.Wait()
		c.mu.Lock()
		c.err = err
		c.mu.Unlock()
		close(c.done)
	}()
	return c, nil
}

// PID is the child's process id.
func (c *Child) PID() int { return c.cmd.Process.Pid }

// Done is closed when the child has exited.
func (c *Child) Done() <-chan struct{} { return c.done }

// Err is the child's exit error once Done is closed.
func (c *Child) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// CloseStdin closes the child's stdin pipe.
func (c *Child) CloseStdin() {
	if c.stdin != nil {
		c.stdin.Close()
	}
}

// Kill sends SIGKILL, as a crash would, and waits for the exit.
func (c *Child) Kill() {
	_ = c.cmd.Process.Signal(syscall.SIGKILL)
	<-c.done
}

// Stop asks the child to shut down (SIGTERM) and waits up to grace before
// killing it.
func (c *Child) Stop(grace time.Duration) {
	select {
	case <-c.done:
		return
	default:
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-c.done:
	case <-t.C:
		c.Kill()
	}
}

// CPU returns the user+system CPU time the child has used so far.
func (c *Child) CPU() (time.Duration, error) { return CPUOf(c.PID()) }

// Memory returns the child's VmRSS and VmHWM in bytes.
func (c *Child) Memory() (rss, hwm int64, err error) { return MemoryOf(c.PID()) }

// clockTicks is USER_HZ, 100 on every Linux the benchmark targets.
const clockTicks = 100

// CPUOf reads utime+stime of a process from /proc/PID/stat.
func CPUOf(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, errors.New("proc: unexpected stat format")
	}
	f := strings.Fields(s[i+1:])
	// After the command name: state is field 3, utime 14, stime 15.
	if len(f) < 13 {
		return 0, errors.New("proc: short stat")
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return time.Duration(u+st) * time.Second / clockTicks, nil
}

// MemoryOf reads VmRSS and VmHWM of a process from /proc/PID/status.
func MemoryOf(pid int) (rss, hwm int64, err error) {
	err = statusKiB(pid, func(k string, n int64) {
		switch k {
		case "VmRSS":
			rss = n
		case "VmHWM":
			hwm = n
		}
	})
	return rss, hwm, err
}

// RSSParts is a process's resident memory split as /proc/PID/status
// splits it: anonymous pages (the heap, stacks), file-backed pages (the
// binary, a memory-mapped database).
type RSSParts struct{ Anon, File int64 }

// RSSPartsOf reads RssAnon and RssFile of a process.
func RSSPartsOf(pid int) (RSSParts, error) {
	var p RSSParts
	err := statusKiB(pid, func(k string, n int64) {
		switch k {
		case "RssAnon":
			p.Anon = n
		case "RssFile":
			p.File = n
		}
	})
	return p, err
}

// statusKiB calls field with each line of /proc/PID/status whose value is
// a number, the number taken as KiB and given in bytes.
func statusKiB(pid int, field func(key string, bytes int64)) error {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return err
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			continue
		}
		if n, err := strconv.ParseInt(f[0], 10, 64); err == nil {
			field(k, n<<10)
		}
	}
	return nil
}

// FreeAddr returns a loopback address whose port was free a moment ago.
func FreeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}
