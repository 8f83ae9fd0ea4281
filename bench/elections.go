package main

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	raftcluster "github.com/gpulayer/gpulayer/coordinator/cluster"
)

// raftReading is what the bench reads of a coordinator's Raft state on
// /metrics: its term and the index it has applied.
type raftReading struct {
	term, applied uint64
}

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
		if n.proc() == nil {
			continue
		}
		if f, err := c.raftFigures(ctx, n); err == nil {
			best = max(best, f.term)
		}
	}
	return best
}

// awaitCaughtUp waits until n has applied every entry leader had applied
// when the wait began, so that the next fault meets a cluster whose
// nodes are all current: a node still catching up cannot win an
// election, and a kill then measures two faults at once.
func (c *cluster) awaitCaughtUp(ctx context.Context, n, leader *coordProc, timeout time.Duration) error {
	lf, err := c.raftFigures(ctx, leader)
	if err != nil {
		return fmt.Errorf("read %s's applied index: %w", leader.id, err)
	}
	deadline := time.Now().Add(timeout)
	for {
		f, err := c.raftFigures(ctx, n)
		if err == nil && f.applied >= lf.applied {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not apply up to %s's index %d within %v (at %d, %v)", n.id, leader.id, lf.applied, timeout, f.applied, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// raftFigures reads a node's Raft term and applied index from /metrics
// (public, cheap: no state is walked to answer it); a node that reports
// either not is an error, never a zero.
func (c *cluster) raftFigures(ctx context.Context, n *coordProc) (raftReading, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, n.url+"/metrics", nil)
	if err != nil {
		return raftReading{}, err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return raftReading{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return raftReading{}, fmt.Errorf("GET %s/metrics: %s", n.url, resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return raftReading{}, fmt.Errorf("parse %s/metrics: %w", n.url, err)
	}
	var f raftReading
	var haveTerm, haveApplied bool
	if m := fams["gpulayer_raft_term"].GetMetric(); len(m) == 1 {
		f.term, haveTerm = uint64(m[0].GetGauge().GetValue()), true
	}
	for _, m := range fams["gpulayer_raft_index"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "index" && l.GetValue() == "applied" {
				f.applied, haveApplied = uint64(m.GetGauge().GetValue()), true
			}
		}
	}
	if !haveTerm || !haveApplied {
		return raftReading{}, fmt.Errorf("%s/metrics reports no Raft term or applied index yet", n.url)
	}
	return f, nil
}
