package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/gpulayer/gpulayer/bench/proc"
	"github.com/gpulayer/gpulayer/coordinator"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// Settings every benchmark cluster shares. The lease grace is tighter than
// the production default (10 s) so that a lease lapsing during a failover
// would show within the run; agents are told to heartbeat every second.
const (
	benchHeartbeatInterval = time.Second
	benchLeaseGrace        = 2 * time.Second
)

type clusterOpts struct {
	// Raft timeouts; zero keeps the coordinator's LAN defaults.
	raftHeartbeat time.Duration
	raftElection  time.Duration
	// nodes is 3 unless set.
	nodes int
}

// coordProc is one coordinator process.
type coordProc struct {
	id, dataDir, httpAddr, raftAddr, debugAddr, url string
	args                                            []string

	mu    sync.Mutex
	child *proc.Child
}

func (n *coordProc) proc() *proc.Child {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.child
}

// cluster is a set of coordinator processes that formed one Raft cluster
// through --bootstrap-expect and --join, as operators form one.
type cluster struct {
	e          *env
	name       string
	nodes      []*coordProc
	adminToken string
	joinToken  string
	hc         *http.Client
}

func (e *env) startCluster(ctx context.Context, name string, opts clusterOpts) (*cluster, error) {
	if opts.nodes == 0 {
		opts.nodes = 3
	}
	root, err := e.dir("cluster-" + name)
	if err != nil {
		return nil, err
	}
	c := &cluster{e: e, name: name, hc: &http.Client{Timeout: 5 * time.Second}}
	for i := range opts.nodes {
		n := &coordProc{id: fmt.Sprintf("c%d", i+1), dataDir: filepath.Join(root, fmt.Sprintf("c%d", i+1))}
		for _, a := range []*string{&n.httpAddr, &n.raftAddr, &n.debugAddr} {
			if *a, err = proc.FreeAddr(); err != nil {
				return nil, err
			}
		}
		n.url = "http://" + n.httpAddr
		c.nodes = append(c.nodes, n)
	}
	toks, err := coordinator.Init(c.nodes[0].dataDir, false, time.Now())
	if err != nil {
		return nil, err
	}
	c.adminToken, c.joinToken = toks.AdminToken, toks.JoinToken
	boot, err := os.ReadFile(filepath.Join(c.nodes[0].dataDir, coordinator.BootstrapFile))
	if err != nil {
		return nil, err
	}
	key, err := os.ReadFile(filepath.Join(c.nodes[0].dataDir, coordinator.ClusterKeyFileName))
	if err != nil {
		return nil, err
	}
	for _, n := range c.nodes[1:] {
		if err := os.MkdirAll(n.dataDir, 0o700); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(n.dataDir, coordinator.BootstrapFile), boot, 0o600); err != nil {
			return nil, err
		}
		// The coordinators authenticate each other with the first one's
		// cluster key.
		if err := os.WriteFile(filepath.Join(n.dataDir, coordinator.ClusterKeyFileName), key, 0o600); err != nil {
			return nil, err
		}
	}
	for _, n := range c.nodes {
		var join []string
		for _, o := range c.nodes {
			if o != n {
				join = append(join, o.url)
			}
		}
		n.args = []string{"__coordinator", "-node-id", n.id, "-data-dir", n.dataDir,
			"-http-addr", n.httpAddr, "-raft-addr", n.raftAddr, "-debug-addr", n.debugAddr,
			"-heartbeat-interval", benchHeartbeatInterval.String(), "-lease-grace", benchLeaseGrace.String()}
		if opts.nodes > 1 {
			n.args = append(n.args, "-bootstrap-expect", fmt.Sprint(opts.nodes), "-join", strings.Join(join, ","))
		}
		if opts.raftHeartbeat > 0 {
			n.args = append(n.args, "-raft-heartbeat", opts.raftHeartbeat.String(), "-raft-election", opts.raftElection.String())
		}
		if err := c.start(ctx, n); err != nil {
			c.stop()
			return nil, err
		}
	}
	if _, err := c.awaitLeader(ctx, "", 30*time.Second); err != nil {
		c.stop()
		return nil, fmt.Errorf("cluster %s: %w", name, err)
	}
	return c, nil
}

func (c *cluster) start(ctx context.Context, n *coordProc) error {
	ch, err := proc.Start(context.WithoutCancel(ctx), proc.Spec{Name: n.id, Exe: c.e.exe, Args: n.args, Stderr: c.e.childLog})
	if err != nil {
		return err
	}
	n.mu.Lock()
	n.child = ch
	n.mu.Unlock()
	return nil
}

// kill ends a coordinator with SIGKILL, as a crash would.
func (c *cluster) kill(n *coordProc) {
	n.mu.Lock()
	ch := n.child
	n.child = nil
	n.mu.Unlock()
	if ch != nil {
		ch.Kill()
	}
}

// restart starts a killed coordinator again on its data dir and addresses.
func (c *cluster) restart(ctx context.Context, n *coordProc) error { return c.start(ctx, n) }

func (c *cluster) stop() {
	var wg sync.WaitGroup
	for _, n := range c.nodes {
		n.mu.Lock()
		ch := n.child
		n.child = nil
		n.mu.Unlock()
		if ch != nil {
			wg.Go(func() { ch.Stop(10 * time.Second) })
		}
	}
	wg.Wait()
}

// urls lists the coordinators with first in front: agents and clients get
// every address, the leader's first.
func (c *cluster) urls(first *coordProc) []string {
	out := []string{first.url}
	for _, n := range c.nodes {
		if n != first {
			out = append(out, n.url)
		}
	}
	return out
}

// awaitLeader waits until a node other than except leads and has taken
// office (it serves an authenticated read instead of 503).
func (c *cluster) awaitLeader(ctx context.Context, except string, timeout time.Duration) (*coordProc, error) {
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		for _, n := range c.nodes {
			if n.id == except || n.proc() == nil {
				continue
			}
			var h api.HealthResponse
			if c.get(ctx, n.url+"/v1/status/health", "", &h) != nil || !h.IsLeader {
				continue
			}
			if c.get(ctx, n.url+"/v1/jobs?limit=1", c.adminToken, nil) == nil {
				return n, nil
			}
		}
		if time.Now().After(deadline) {
			return nil, errors.New("no leader took office in time")
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-tick.C:
		}
	}
}

// knowsLeader reports whether n is up and names a leader.
func (c *cluster) knowsLeader(ctx context.Context, n *coordProc) bool {
	var h api.HealthResponse
	return c.get(ctx, n.url+"/v1/status/health", "", &h) == nil && h.Leader != ""
}

// appliedIndex is the Raft index a node has applied.
func (c *cluster) appliedIndex(ctx context.Context, n *coordProc) (uint64, error) {
	var d api.DigestResponse
	err := c.get(ctx, n.url+"/v1/operator/local/digest", c.adminToken, &d)
	return d.AppliedIndex, err
}

// get performs one GET without retries.
func (c *cluster) get(ctx context.Context, url, token string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set(api.ProtocolHeader, api.ProtocolVersion)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, resp.Body)
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	if out == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		return err
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// warnLeaderMoved records, as a row of its own, that leadership changed
// during a measurement nobody disturbed: Raft's heartbeats were starved
// (the machine is shared and was overloaded), so the scenario's figures
// describe elections, not the coordinator's capacity. It is not a
// functional failure of GpuLayer, so it does not fail the run.
func (e *env) warnLeaderMoved(scenario string, was *coordProc) {
	e.report.add(Row{Scenario: scenario, Metric: "WARNING", Value: "leadership moved away from " + was.id + " during the window without a kill: Raft heartbeats were starved (machine overloaded); figures above are not capacity"})
	e.log.Warn("leadership moved during a measurement", "scenario", scenario, "was", was.id)
}
