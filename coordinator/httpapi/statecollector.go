package httpapi

import (
	"github.com/prometheus/client_golang/prometheus"
)

var (
	tasksDesc     = prometheus.NewDesc("gpulayer_tasks", "Tasks by state.", []string{"state"}, nil)
	workersDesc   = prometheus.NewDesc("gpulayer_workers", "Registered workers.", nil, nil)
	workersByDesc = prometheus.NewDesc("gpulayer_workers_by_status", "Registered workers by status.", []string{"status"}, nil)
	jobsDesc      = prometheus.NewDesc("gpulayer_jobs", "Jobs held in state.", nil, nil)
	leasesDesc    = prometheus.NewDesc("gpulayer_leases_held", "Tasks assigned to or running on a worker, each under a lease.", nil, nil)
	queueDesc     = prometheus.NewDesc("gpulayer_queue_depth", "Pending tasks by executor.", []string{"executor"}, nil)
	isLeaderDesc  = prometheus.NewDesc("gpulayer_is_leader", "1 if this coordinator leads the Raft cluster.", nil, nil)
	longPollsDesc = prometheus.NewDesc("gpulayer_long_polls_open", "Acquire long polls and log follow streams open on this coordinator.", nil, nil)
	stateDescs    = []*prometheus.Desc{tasksDesc, workersDesc, workersByDesc, jobsDesc, leasesDesc, queueDesc, isLeaderDesc, longPollsDesc}
)

// stateCollector reads the replicated state's counts on each scrape (one
// pass under the store's read lock) instead of keeping gauges up to date
// on every write. Every coordinator reports the same state counts, as of
// the index it has applied.
type stateCollector struct{ s *Server }

func (c stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range stateDescs {
		ch <- d
	}
}

func (c stateCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.s.store.Stats()
	gauge := func(d *prometheus.Desc, v int, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v), labels...)
	}
	for state, n := range st.TasksByState {
		gauge(tasksDesc, n, state)
	}
	gauge(workersDesc, st.Workers)
	for status, n := range st.WorkersByStatus {
		gauge(workersByDesc, n, status)
	}
	gauge(jobsDesc, st.Jobs)
	gauge(leasesDesc, st.LeasesHeld)
	for executor, n := range st.PendingByExecutor {
		gauge(queueDesc, n, executor)
	}
	leader := 0
	if c.s.cluster.IsLeader() {
		leader = 1
	}
	gauge(isLeaderDesc, leader)
	gauge(longPollsDesc, c.s.polls.total())
}
