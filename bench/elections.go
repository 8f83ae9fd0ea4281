package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	raftcluster "github.com/gpulayer/gpulayer/coordinator/cluster"
)

// The Raft figures a coordinator reports on /metrics.
const (
	termMetric    = "gpulayer_raft_term"
	appliedMetric = `gpulayer_raft_index{index="applied"}`
)

// timeoutsNow names the coordinator's default Raft timeouts, which the
// tuned cluster runs on.
func timeoutsNow() string {
	return fmt.Sprintf("heartbeat %v, election %v, lease %v", raftcluster.DefaultHeartbeatTimeout, raftcluster.DefaultElectionTimeout, raftcluster.DefaultLeaderLeaseTimeout)
}

// maxTerm is the highest Raft term the running nodes report. Every
// election raises the term by one; a candidacy that pre-vote refuses
// does not. The difference over a window is how many elections it held:
// 0 under load without a kill, 1 a kill when each failover takes one
// round. 0 when no node answers.
func (c *cluster) maxTerm(ctx context.Context) uint64 {
	var best uint64
	for _, n := range c.nodes {
		n.mu.Lock()
		up := n.child != nil
		n.mu.Unlock()
		if !up {
			continue
		}
		if m, err := c.raftFigures(ctx, n); err == nil {
			best = max(best, uint64(m[termMetric]))
		}
	}
	return best
}

// awaitCaughtUp waits until n has applied every entry leader had applied
// when the wait began, so that the next fault meets a cluster whose
// nodes are all current: a node still catching up cannot win an
// election, and a kill then measures two faults at once.
func (c *cluster) awaitCaughtUp(ctx context.Context, n, leader *coordProc, timeout time.Duration) error {
	lm, err := c.raftFigures(ctx, leader)
	if err != nil {
		return fmt.Errorf("read %s's applied index: %w", leader.id, err)
	}
	want := lm[appliedMetric]
	deadline := time.Now().Add(timeout)
	for {
		m, err := c.raftFigures(ctx, n)
		if err == nil && m[appliedMetric] >= want {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not apply up to %s's index %.0f within %v (at %.0f, %v)", n.id, leader.id, want, timeout, m[appliedMetric], err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// raftFigures reads a node's Raft term and applied index from /metrics
// (public, cheap: no state is walked to answer it).
func (c *cluster) raftFigures(ctx context.Context, n *coordProc) (map[string]float64, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, n.url+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s/metrics: %s", n.url, resp.Status)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		name, v, ok := strings.Cut(sc.Text(), " ")
		if !ok || (name != termMetric && name != appliedMetric) {
			continue
		}
		if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
			out[name] = f
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if _, ok := out[termMetric]; !ok {
		return nil, fmt.Errorf("%s/metrics has no %s", n.url, termMetric)
	}
	return out, nil
}
