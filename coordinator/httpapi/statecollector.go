package httpapi

import (
	"github.com/gpulayer/gpulayer/coordinator/command"
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
	pendingDesc   = prometheus.NewDesc("gpulayer_tasks_pending", "Tasks waiting in the queue for a worker, every executor.", nil, nil)
	gpusAllocDesc = prometheus.NewDesc("gpulayer_gpus_allocated", "GPUs held by an active task, whole or by a share, by model.", []string{"model"}, nil)
	gpusFreeDesc  = prometheus.NewDesc("gpulayer_gpus_free", "Healthy, approved GPUs no task holds on ready workers, by model: what placement can give out now.", []string{"model"}, nil)
	gpusSickDesc  = prometheus.NewDesc("gpulayer_gpus_unhealthy", "GPUs their agent reports not healthy (unhealthy, recovering or unknown), by model.", []string{"model"}, nil)
	gpusWornDesc  = prometheus.NewDesc("gpulayer_gpus_degraded", "GPUs their agent reports degraded (working, with a condition such as throttling; placed last), by model; each is also counted allocated or free.", []string{"model"}, nil)
	teamSecsDesc  = prometheus.NewDesc("gpulayer_team_gpu_seconds_total", "GPU time of ended attempts since metering began, in GPU-seconds (a MIG instance or a share counts its fraction of its GPU), by team and GPU model.", []string{"team", "gpu_model"}, nil)
	teamInUseDesc = prometheus.NewDesc("gpulayer_team_gpus_in_use", "GPUs the team's active tasks hold, in GPU units.", []string{"team"}, nil)
	teamWaitDesc  = prometheus.NewDesc("gpulayer_team_tasks_pending", "The team's tasks waiting in the queue.", []string{"team"}, nil)
	stateDescs    = []*prometheus.Desc{teamSecsDesc, teamInUseDesc, teamWaitDesc, tasksDesc, workersDesc, workersByDesc, jobsDesc, leasesDesc, queueDesc, isLeaderDesc, longPollsDesc, pendingDesc, gpusAllocDesc, gpusFreeDesc, gpusSickDesc, gpusWornDesc}
)

// stateCollector reads the replicated state's counts on each scrape (one
// pass under the store's read lock, GPUs by model included) instead of
// keeping gauges up to date on every write: nothing is added to the
// apply path. Every coordinator reports the same state counts, as of
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
	gauge(pendingDesc, st.Pending)
	for model, c := range st.GPUs {
		gauge(gpusAllocDesc, c.Allocated, model)
		gauge(gpusFreeDesc, c.Free, model)
		gauge(gpusSickDesc, c.Unhealthy, model)
		gauge(gpusWornDesc, c.Degraded, model)
	}
	for _, u := range c.s.store.UsageTotals() {
		ch <- prometheus.MustNewConstMetric(teamSecsDesc, prometheus.CounterValue, float64(u.CentiGPUMillis)/(command.CentiGPUsPerGPU*1000), u.Team, u.Model)
	}
	for _, t := range c.s.store.Teams() {
		ch <- prometheus.MustNewConstMetric(teamInUseDesc, prometheus.GaugeValue, float64(t.Usage.CentiGPUsInUse)/command.CentiGPUsPerGPU, t.Team.Name)
		gauge(teamWaitDesc, t.Usage.PendingTasks, t.Team.Name)
	}
	leader := 0
	if c.s.cluster.IsLeader() {
		leader = 1
	}
	gauge(isLeaderDesc, leader)
	gauge(longPollsDesc, c.s.polls.total())
}
