package agent

import (
	"context"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gpulayer/gpulayer/agent/pluginhost"
	"github.com/gpulayer/gpulayer/agent/runner"
)

// Calls to the coordinator counted by gpulayer_agent_coordinator_errors_total.
const (
	callHeartbeat = "heartbeat"
	callAcquire   = "acquire"
)

// taskBuckets span a quick task to a day-long training run, in seconds.
var taskBuckets = []float64{1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200, 14400, 43200, 86400}

// heartbeatBuckets span a heartbeat answered at once to one that waited
// out the client's retries, in seconds.
var heartbeatBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}

// Metrics are an agent's event counters, in a registry of their own: a
// process may run several agents (the tests do). The agent adds collectors
// that read its state (tasks running, GPU health, the worker's command)
// when scraped. Metrics is also the plugin host's Events. It is safe for
// concurrent use; the agent always collects, and serves the registry only
// when given an address (Config.MetricsAddr).
type Metrics struct {
	reg           *prometheus.Registry
	finished      *prometheus.CounterVec
	duration      prometheus.Histogram
	pluginStarts  *prometheus.CounterVec
	pluginCrashes *prometheus.CounterVec
	coordErrors   *prometheus.CounterVec
	heartbeat     prometheus.Histogram
	xids          *prometheus.CounterVec
	nvmlErrors    *prometheus.CounterVec
}

var _ pluginhost.Events = (*Metrics)(nil)

// NewMetrics returns an agent's counters in a fresh registry. Every task
// outcome and coordinator call is there from the start, at 0.
func NewMetrics() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		finished: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gpulayer_agent_tasks_finished_total",
			Help: "Task attempts this agent ran to their end, by outcome.",
		}, []string{"outcome"}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "gpulayer_agent_task_duration_seconds",
			Help:    "Time from a task attempt's assignment to its reported end, whatever the outcome.",
			Buckets: taskBuckets,
		}),
		pluginStarts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gpulayer_agent_plugin_starts_total",
			Help: "Executor plugin processes launched, by executor: the first launch and every relaunch after a crash.",
		}, []string{"executor"}),
		pluginCrashes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gpulayer_agent_plugin_crashes_total",
			Help: "Executor plugin processes that died or stopped answering while in use, by executor.",
		}, []string{"executor"}),
		coordErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gpulayer_agent_coordinator_errors_total",
			Help: "Calls to the coordinators that failed, by call (heartbeat, acquire).",
		}, []string{"call"}),
		heartbeat: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "gpulayer_agent_heartbeat_duration_seconds",
			Help:    "Time to send a heartbeat and get its answer (or error), retries included.",
			Buckets: heartbeatBuckets,
		}),
		xids: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gpulayer_gpu_xid_total",
			Help: "XID errors the driver reported on each GPU, by XID and its class (docs/gpus.md).",
		}, []string{"uuid", "xid", "class"}),
		nvmlErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gpulayer_nvml_errors_total",
			Help: "NVML calls that failed while sampling GPU metrics, by call and NVML's error (not-supported readings are not counted).",
		}, []string{"call", "code"}),
	}
	for _, e := range runner.Ends() {
		m.finished.WithLabelValues(string(e))
	}
	for _, c := range []string{callHeartbeat, callAcquire} {
		m.coordErrors.WithLabelValues(c)
	}
	m.reg.MustRegister(m.finished, m.duration, m.pluginStarts, m.pluginCrashes, m.coordErrors, m.heartbeat, m.xids, m.nvmlErrors)
	return m
}

// Gatherer is the registry, for a handler or a test.
func (m *Metrics) Gatherer() prometheus.Gatherer { return m.reg }

// PluginStarted counts a plugin process launched (pluginhost.Events),
// and makes the executor's crash count appear at 0: a counter that first
// shows at 1 hides its first increase from rate() and increase().
func (m *Metrics) PluginStarted(executor string) {
	m.pluginStarts.WithLabelValues(executor).Inc()
	m.pluginCrashes.WithLabelValues(executor)
}

// PluginCrashed counts a plugin process that crashed (pluginhost.Events).
func (m *Metrics) PluginCrashed(executor string) { m.pluginCrashes.WithLabelValues(executor).Inc() }

// taskFinished counts an attempt that ended after took.
func (m *Metrics) taskFinished(end runner.End, took time.Duration) {
	m.finished.WithLabelValues(string(end)).Inc()
	m.duration.Observe(took.Seconds())
}

// heartbeatDone records a heartbeat answered after took; one cut short
// because the agent is stopping (ctx ended) is not counted.
func (m *Metrics) heartbeatDone(ctx context.Context, took time.Duration, err error) {
	if ctx.Err() != nil {
		return
	}
	m.heartbeat.Observe(took.Seconds())
	if err != nil {
		m.coordErrors.WithLabelValues(callHeartbeat).Inc()
	}
}

// acquireFailed counts an acquire that failed.
func (m *Metrics) acquireFailed() { m.coordErrors.WithLabelValues(callAcquire).Inc() }

// xidSeen counts an XID the driver reported on a GPU.
func (m *Metrics) xidSeen(uuid string, xid uint64, class string) {
	m.xids.WithLabelValues(uuid, strconv.FormatUint(xid, 10), class).Inc()
}

// nvmlFailed counts a failed NVML call of the GPU sampler.
func (m *Metrics) nvmlFailed(call, code string) { m.nvmlErrors.WithLabelValues(call, code).Inc() }
