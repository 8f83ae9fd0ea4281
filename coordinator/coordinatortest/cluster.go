package coordinatortest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator"
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/internal/faultproxy"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// Cluster is several coordinators over real Raft on loopback, with a
// fault-injecting proxy on every directed Raft link.
type Cluster struct {
	t          testing.TB
	Nodes      []*Node
	AdminToken string
	JoinToken  string
	links      map[[2]int]*faultproxy.Proxy
	opts       Options
	root       string
	keyFile    string // the cluster key every node is given

	mu    sync.Mutex // guards Nodes against AddNode while Raft dials
	exits []Exit
}

// Node is one coordinator of a Cluster.
type Node struct {
	Index    int
	ID       string
	DataDir  string
	RaftAddr string
	HTTPAddr string
	URL      string

	// expect is the --bootstrap-expect the node starts with.
	expect int

	mu     sync.Mutex
	server *coordinator.Server
	proc   *proc // with Options.Processes
	stop   func()
}

// Server is the node's running coordinator, nil while it is stopped or
// when it runs in a process of its own.
func (n *Node) Server() *coordinator.Server {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.server
}

func (n *Node) process() *proc {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.proc
}

// Running reports whether the node's coordinator is up: started and not
// stopped, or a process that has not exited.
func (n *Node) Running() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.server != nil || (n.proc != nil && n.proc.alive())
}

// Control sends a command to the node's coordinator process (Options.
// Processes) and returns the value of its answer:
//
//	leader                true when it leads and has taken office
//	snapshot FILE         writes its replicated state to FILE
//	clock DURATION        steps its clock (for example -45s); answers the total step
//	fail-writes N         its next N Raft log writes fail and store nothing
//	fail-syncs N          its next N Raft log writes are stored, then reported failed
//	disk-full on|off      every Raft write (log, stable store, snapshots) fails with ENOSPC
//	injected              the disk faults delivered so far: "full=3 sync=1 write=2"
func (n *Node) Control(cmd string) (string, error) {
	p := n.process()
	if p == nil {
		return "", errors.New("coordinatortest: Control needs a node started with Options.Processes")
	}
	return p.control(cmd)
}

// StartCluster starts n coordinators that form one cluster through
// --bootstrap-expect and --join, and waits for a leader.
func StartCluster(t testing.TB, n int, opts Options) *Cluster {
	t.Helper()
	c := &Cluster{t: t, links: map[[2]int]*faultproxy.Proxy{}, opts: opts}
	if opts.Processes && opts.TLS != nil {
		t.Fatal("coordinatortest: Options.Processes does not run TLS")
	}
	root := t.TempDir()
	c.root = root
	// The coordinators authenticate each other with one cluster key
	// (unless the options give them certificates).
	keyFile, err := coordinator.InitClusterKey(root)
	if err != nil {
		t.Fatal(err)
	}
	c.keyFile = keyFile
	for i := range n {
		node := &Node{Index: i, ID: nodeID(i), DataDir: filepath.Join(root, nodeID(i)), RaftAddr: FreeAddr(t), HTTPAddr: FreeAddr(t), expect: n}
		node.URL = opts.TLS.scheme() + node.HTTPAddr
		c.Nodes = append(c.Nodes, node)
	}
	toks, err := coordinator.Init(c.Nodes[0].DataDir, false, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	c.AdminToken, c.JoinToken = toks.AdminToken, toks.JoinToken
	boot, err := os.ReadFile(filepath.Join(c.Nodes[0].DataDir, coordinator.BootstrapFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, node := range c.Nodes[1:] {
		if err := os.MkdirAll(node.DataDir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(node.DataDir, coordinator.BootstrapFile), boot, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for i, from := range c.Nodes {
		for j, to := range c.Nodes {
			if i == j {
				continue
			}
			p, err := faultproxy.New(to.RaftAddr)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { p.Close() })
			c.links[[2]int{from.Index, to.Index}] = p
		}
	}
	var wg sync.WaitGroup
	for _, node := range c.Nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.start(node)
		}()
	}
	wg.Wait()
	c.WaitLeader(15 * time.Second)
	return c
}

func nodeID(i int) string { return "c" + string(rune('1'+i)) }

func (c *Cluster) start(n *Node) {
	t := c.t
	logger := c.opts.Logger
	if logger == nil {
		logger = TestLogger(t)
	}
	var join []string
	for _, o := range c.Nodes {
		if o != n {
			join = append(join, o.URL)
		}
	}
	cfg := coordinator.Config{
		NodeID:          n.ID,
		DataDir:         n.DataDir,
		HTTPAddr:        n.HTTPAddr,
		RaftAddr:        n.RaftAddr,
		BootstrapExpect: n.expect,
		Join:            join,
		Logger:          logger.With("node", n.ID),
		LeaseGrace:      2 * time.Second,
		LeaseTick:       50 * time.Millisecond,
		RaftDial:        c.dialer(n.Index),
		ClusterKeyFile:  c.keyFile,
	}
	pinRaftTimeouts(&cfg)
	c.opts.TLS.apply(&cfg)
	if c.opts.Tweak != nil {
		c.opts.Tweak(&cfg)
	}
	if c.opts.Processes {
		p, err := c.startProcess(n, cfg)
		if err != nil {
			t.Errorf("start %s: %v", n.ID, err)
			return
		}
		stop := sync.OnceFunc(func() { p.terminate(15 * time.Second) })
		t.Cleanup(stop)
		n.mu.Lock()
		n.proc, n.stop = p, stop
		n.mu.Unlock()
		return
	}
	srv, err := coordinator.New(cfg)
	if err != nil {
		t.Errorf("start %s: %v", n.ID, err)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("coordinator %s: %v", n.ID, err)
			}
		})
	}
	t.Cleanup(stop)
	n.mu.Lock()
	n.server, n.stop = srv, stop
	n.mu.Unlock()
}

// dialer routes node from's Raft connections through the link proxies.
func (c *Cluster) dialer(from int) func(string, time.Duration) (net.Conn, error) {
	return func(address string, timeout time.Duration) (net.Conn, error) {
		c.mu.Lock()
		nodes := c.Nodes
		c.mu.Unlock()
		for _, to := range nodes {
			if to.RaftAddr == address {
				if p, ok := c.links[[2]int{from, to.Index}]; ok {
					return net.DialTimeout("tcp", p.Addr(), timeout)
				}
			}
		}
		return net.DialTimeout("tcp", address, timeout)
	}
}

// AddNode starts one more coordinator with an empty data dir that joins
// the running cluster through --join (without --bootstrap-expect); it
// waits to be added with AddPeer. Its Raft links carry no proxies.
func (c *Cluster) AddNode() *Node {
	c.t.Helper()
	i := len(c.Nodes)
	n := &Node{Index: i, ID: nodeID(i), DataDir: filepath.Join(c.t.TempDir(), nodeID(i)), RaftAddr: FreeAddr(c.t), HTTPAddr: FreeAddr(c.t)}
	n.URL = c.opts.TLS.scheme() + n.HTTPAddr
	boot, err := os.ReadFile(filepath.Join(c.Nodes[0].DataDir, coordinator.BootstrapFile))
	if err != nil {
		c.t.Fatal(err)
	}
	if err := os.MkdirAll(n.DataDir, 0o700); err != nil {
		c.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(n.DataDir, coordinator.BootstrapFile), boot, 0o600); err != nil {
		c.t.Fatal(err)
	}
	c.mu.Lock()
	c.Nodes = append(c.Nodes, n)
	c.mu.Unlock()
	c.start(n)
	return n
}

// Stop shuts a node down gracefully.
func (c *Cluster) Stop(n *Node) {
	n.mu.Lock()
	stop := n.stop
	n.server, n.proc, n.stop = nil, nil, nil
	n.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// Kill ends a node's process with SIGKILL: nothing is flushed, closed or
// handed over. It needs Options.Processes.
func (c *Cluster) Kill(n *Node) {
	c.t.Helper()
	n.mu.Lock()
	p := n.proc
	n.server, n.proc, n.stop = nil, nil, nil
	n.mu.Unlock()
	if p == nil {
		if !c.opts.Processes {
			c.t.Errorf("coordinatortest: Kill needs Options.Processes")
		}
		return
	}
	p.kill()
}

// noteExit keeps a process's end that no Stop or Kill asked for.
func (c *Cluster) noteExit(e Exit) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.exits = append(c.exits, e)
}

// Exits lists the coordinator processes that ended by themselves (a
// panic, a fatal error), oldest first.
func (c *Cluster) Exits() []Exit {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Exit(nil), c.exits...)
}

// Restart starts a stopped node again on its data dir and addresses.
func (c *Cluster) Restart(n *Node) {
	if p := n.process(); p != nil && !p.alive() {
		c.Stop(n) // it exited by itself: forget it first
	}
	c.start(n)
}

// Partition cuts every Raft link to and from n.
func (c *Cluster) Partition(n *Node) {
	for k, p := range c.links {
		if k[0] == n.Index || k[1] == n.Index {
			p.SetBlocked(true)
		}
	}
}

// Link returns the proxy on the directed link from → to.
func (c *Cluster) Link(from, to *Node) *faultproxy.Proxy {
	return c.links[[2]int{from.Index, to.Index}]
}

// Heal restores every link and removes injected delays and drops.
func (c *Cluster) Heal() {
	for _, p := range c.links {
		p.SetBlocked(false)
		p.SetDelay(0)
		p.SetDropRate(0)
	}
}

// Leader returns the node that leads and has taken office, or nil.
func (c *Cluster) Leader() *Node {
	for _, n := range c.Nodes {
		if s := n.Server(); s != nil && s.LeaderReady() {
			return n
		}
		if p := n.process(); p != nil {
			if v, err := p.control("leader"); err == nil && v == "true" {
				return n
			}
		}
	}
	return nil
}

// WaitLeader waits until some node leads and has taken office.
func (c *Cluster) WaitLeader(timeout time.Duration) *Node {
	c.t.Helper()
	var l *Node
	WaitFor(c.t, timeout, "a leader", func() bool { l = c.Leader(); return l != nil })
	return l
}

// URLs lists every node's HTTP URL.
func (c *Cluster) URLs() []string {
	out := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		out[i] = n.URL
	}
	return out
}

// Client returns a client that knows every node.
func (c *Cluster) Client(token string) *client.Client {
	cl, err := client.New(client.Config{Addrs: c.URLs(), Token: token, CAFile: c.opts.TLS.caFile(), MaxRetryWait: 20 * time.Second})
	if err != nil {
		c.t.Fatal(err)
	}
	return cl
}

// Converged waits until every running node has applied the same log and
// holds byte-identical state and task output, and returns that state (the
// store's snapshot section).
func (c *Cluster) Converged(timeout time.Duration) []byte {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		var first, firstOut []byte
		same := true
		var seen []string // each node's state, for the report on a timeout
		for _, n := range c.Nodes {
			state, ok := c.state(n)
			out, outOK := c.output(n)
			switch {
			case !ok || !outOK:
				seen = append(seen, fmt.Sprintf("%s: not running or no answer (running %v)", n.ID, n.Running()))
				continue
			case first == nil:
				first, firstOut = state, out
			case !bytes.Equal(first, state) || !bytes.Equal(firstOut, out):
				same = false
			}
			sum := sha256.Sum256(state)
			seen = append(seen, fmt.Sprintf("%s: %d bytes, sha256 %x, output sha256 %x, raft %s", n.ID, len(state), sum[:6], out[:6], c.raftOf(n)))
		}
		if same && first != nil {
			return first
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("timed out after %v waiting for every node to hold the same state: %s%s", timeout, strings.Join(seen, "; "), c.dumpStacks())
		}
		<-time.After(10 * time.Millisecond)
	}
}

// dumpStacks writes, for a report, every coordinator process's goroutines
// and the end of its stderr to a file that outlives the test (a node that
// does not catch up is stuck somewhere), and says where.
func (c *Cluster) dumpStacks() string {
	var out []string
	for _, n := range c.Nodes {
		p := n.process()
		if p == nil || !p.alive() {
			continue
		}
		f, err := os.CreateTemp("", "gpulayer-stacks-"+n.ID+"-")
		if err != nil {
			continue
		}
		f.Close()
		if _, err := p.control("stacks " + f.Name()); err != nil {
			continue
		}
		if tail, err := os.OpenFile(f.Name(), os.O_APPEND|os.O_WRONLY, 0); err == nil {
			fmt.Fprintf(tail, "\n--- end of stderr ---\n%s", p.stderr.String())
			tail.Close()
		}
		out = append(out, n.ID+" "+f.Name())
	}
	if len(out) == 0 {
		return ""
	}
	return "; goroutines and stderr: " + strings.Join(out, ", ")
}

// raftOf summarises a running node's Raft stats, for a report.
func (c *Cluster) raftOf(n *Node) string {
	if s := n.Server(); s != nil {
		return raftSummary(s.Node().Stats())
	}
	if p := n.process(); p != nil && p.alive() {
		if v, err := p.control("raft"); err == nil {
			return v
		}
	}
	return "(no answer)"
}

// output is the digest of a running node's task output (its snapshot
// section); ok is false for a node that is not running or could not
// answer.
func (c *Cluster) output(n *Node) ([]byte, bool) {
	if s := n.Server(); s != nil {
		sum, err := outputDigest(s.Store())
		return sum, err == nil
	}
	p := n.process()
	if p == nil || !p.alive() {
		return nil, false
	}
	v, err := p.control("output")
	if err != nil {
		return nil, false
	}
	sum, err := hex.DecodeString(v)
	return sum, err == nil && len(sum) == sha256.Size
}

// outputDigest hashes store's output section.
func outputDigest(store *state.Store) ([]byte, error) {
	capture, err := store.CaptureOutput()
	if err != nil {
		return nil, err
	}
	defer capture.Release()
	h := sha256.New()
	if _, err := capture.WriteTo(h); err != nil {
		return nil, err
	}
	return h.Sum(nil), nil
}

// state reads a running node's replicated state; ok is false for a node
// that is not running or could not answer.
func (c *Cluster) state(n *Node) ([]byte, bool) {
	if s := n.Server(); s != nil {
		var buf bytes.Buffer
		if err := s.Store().Snapshot(&buf); err != nil {
			return nil, false
		}
		return buf.Bytes(), true
	}
	p := n.process()
	if p == nil || !p.alive() {
		return nil, false
	}
	f, err := os.CreateTemp(c.root, "state-")
	if err != nil {
		return nil, false
	}
	f.Close()
	defer os.Remove(f.Name())
	if _, err := p.control("snapshot " + f.Name()); err != nil {
		return nil, false
	}
	b, err := os.ReadFile(f.Name())
	return b, err == nil
}
