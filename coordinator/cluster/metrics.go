package cluster

import (
	"strings"

	"github.com/hashicorp/raft"
	"github.com/prometheus/client_golang/prometheus"
)

var (
	raftTermDesc    = prometheus.NewDesc("gpulayer_raft_term", "Current Raft term of this coordinator.", nil, nil)
	raftStateDesc   = prometheus.NewDesc("gpulayer_raft_state", "1 for this coordinator's current Raft role, 0 for the others.", []string{"state"}, nil)
	raftIndexDesc   = prometheus.NewDesc("gpulayer_raft_index", "Raft log positions of this coordinator: last log entry, commit, applied.", []string{"index"}, nil)
	raftRoles       = []raft.RaftState{raft.Follower, raft.Candidate, raft.Leader, raft.Shutdown}
	raftIndexLabels = map[string]func(r *raft.Raft) uint64{
		"last":    func(r *raft.Raft) uint64 { return r.LastIndex() },
		"commit":  func(r *raft.Raft) uint64 { return r.CommitIndex() },
		"applied": func(r *raft.Raft) uint64 { return r.AppliedIndex() },
	}
)

// Collector reports the node's Raft term, role and log positions, read on
// each scrape. Raft's own timings and counters come through go-metrics
// (see internal/telemetry).
func (n *Node) Collector() prometheus.Collector { return nodeCollector{n} }

type nodeCollector struct{ n *Node }

func (c nodeCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- raftTermDesc
	ch <- raftStateDesc
	ch <- raftIndexDesc
}

func (c nodeCollector) Collect(ch chan<- prometheus.Metric) {
	r := c.n.raft
	ch <- prometheus.MustNewConstMetric(raftTermDesc, prometheus.GaugeValue, float64(r.CurrentTerm()))
	now := r.State()
	for _, s := range raftRoles {
		v := 0.0
		if s == now {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(raftStateDesc, prometheus.GaugeValue, v, strings.ToLower(s.String()))
	}
	for name, read := range raftIndexLabels {
		ch <- prometheus.MustNewConstMetric(raftIndexDesc, prometheus.GaugeValue, float64(read(r)), name)
	}
}
