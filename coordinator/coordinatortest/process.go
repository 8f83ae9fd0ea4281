package coordinatortest

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gpulayer/gpulayer/coordinator"
	"github.com/gpulayer/gpulayer/internal/tailbuf"
)

// ErrExited is returned by a control command sent to a coordinator
// process that has exited.
var ErrExited = errors.New("coordinatortest: the coordinator process has exited")

// Exit is a coordinator process that ended without being told to.
type Exit struct {
	Node string
	At   time.Time
	Err  string
	// Tail is the end of what it wrote to standard error (a panic's trace,
	// say).
	Tail string
}

// proc is one coordinator running in a child process.
type proc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	out    *bufio.Reader
	stderr *tailbuf.Buffer

	mu sync.Mutex // one control exchange at a time

	exited chan struct{}
	// err and asked are set before exited closes; asked: the parent sent
	// the signal that ended it.
	err   error
	asked bool
	sigMu sync.Mutex
}

// startProcess runs n as a child process of the test binary.
func (c *Cluster) startProcess(n *Node, cfg coordinator.Config) (*proc, error) {
	links := map[string]string{}
	for k, p := range c.links {
		if k[0] == n.Index {
			links[c.Nodes[k[1]].RaftAddr] = p.Addr()
		}
	}
	raw, err := json.Marshal(specOf(cfg, links))
	if err != nil {
		return nil, err
	}
	// -test.run matches nothing: a binary whose TestMain forgot ServeChild
	// runs no test and exits, rather than running the suite again.
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+string(raw))
	// No Pdeathsig: it fires when the thread that forked ends, which in a
	// Go program may be long before the test does. The child exits when
	// its standard input ends instead, which is when this process does.
	p := &proc{cmd: cmd, stderr: tailbuf.New(16 << 10), exited: make(chan struct{})}
	cmd.Stderr = p.stderr
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	p.out = bufio.NewReader(stdout)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		err := cmd.Wait()
		p.sigMu.Lock()
		asked := p.asked
		p.sigMu.Unlock()
		p.err = err
		close(p.exited)
		if !asked {
			c.noteExit(Exit{Node: n.ID, At: time.Now(), Err: fmt.Sprint(err), Tail: p.stderr.String()})
		}
	}()
	first, err := p.readLine()
	switch {
	case err != nil:
		return nil, fmt.Errorf("coordinator process %s did not start (does TestMain call coordinatortest.ServeChild?): %v\n%s", n.ID, err, p.stderr.String())
	case first != "ready":
		p.signal(syscall.SIGKILL)
		return nil, fmt.Errorf("coordinator process %s: %s", n.ID, strings.TrimPrefix(first, "fail "))
	}
	return p, nil
}

// readLine reads the child's next answer, or fails once it has exited.
func (p *proc) readLine() (string, error) {
	type result struct {
		line string
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		line, err := p.out.ReadString('\n')
		ch <- result{strings.TrimSuffix(line, "\n"), err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			return "", ErrExited
		}
		return r.line, nil
	case <-p.exited:
		return "", ErrExited
	}
}

// control sends one command and returns the value of its "ok" answer.
func (p *proc) control(cmd string) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.exited:
		return "", ErrExited
	default:
	}
	if _, err := io.WriteString(p.stdin, cmd+"\n"); err != nil {
		return "", ErrExited
	}
	line, err := p.readLine()
	if err != nil {
		return "", err
	}
	if v, ok := strings.CutPrefix(line, "ok"); ok {
		return strings.TrimSpace(v), nil
	}
	return "", fmt.Errorf("coordinatortest: %s: %s", cmd, strings.TrimPrefix(line, "err "))
}

func (p *proc) alive() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// signal sends sig unless the process has ended, marking the end as
// asked for.
func (p *proc) signal(sig syscall.Signal) {
	p.sigMu.Lock()
	p.asked = true
	p.sigMu.Unlock()
	if p.alive() {
		_ = p.cmd.Process.Signal(sig)
	}
}

// terminate stops the process gracefully, and kills it if it has not
// ended within grace.
func (p *proc) terminate(grace time.Duration) {
	p.signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(grace):
		p.signal(syscall.SIGKILL)
		<-p.exited
	}
}

// kill ends the process at once, as a crash or the OOM killer would.
func (p *proc) kill() {
	p.signal(syscall.SIGKILL)
	<-p.exited
}
