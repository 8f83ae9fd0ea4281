package agent

import (
	"cmp"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gpulayer/gpulayer/agent/devices/health"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// healthStates are the states of gpulayer_agent_gpu_health's state set.
var healthStates = []health.State{health.Healthy, health.Unhealthy, health.Recovering, health.Unknown}

// workerCommands are the states of gpulayer_agent_worker_command.
var workerCommands = []string{api.CommandNone, api.CommandDrain, api.CommandStop}

var (
	tasksRunningDesc = prometheus.NewDesc("gpulayer_agent_tasks_running",
		"Task attempts this agent runs now, including one waiting for an attempt it superseded to end.", nil, nil)
	taskSlotsDesc = prometheus.NewDesc("gpulayer_agent_task_slots",
		"Task attempts this agent runs at most at once (--max-tasks).", nil, nil)
	gpuHealthDesc = prometheus.NewDesc("gpulayer_agent_gpu_health",
		"1 for each GPU's current health state, 0 for the others.", []string{"uuid", "index", "state"}, nil)
	gpusDesc = prometheus.NewDesc("gpulayer_agent_gpus",
		"GPUs of this agent by health state.", []string{"health"}, nil)
	reportSpoolDesc = prometheus.NewDesc("gpulayer_agent_report_spool_records",
		"Attempt reports kept on disk until a coordinator acknowledges them.", nil, nil)
	reportSpoolBytesDesc = prometheus.NewDesc("gpulayer_agent_report_spool_bytes",
		"Size of the attempt reports kept on disk until a coordinator acknowledges them.", nil, nil)
	workerCommandDesc = prometheus.NewDesc("gpulayer_agent_worker_command",
		"1 for the coordinator's command in force for this worker (none, drain, stop), 0 for the others.", []string{"command"}, nil)
)

// stateCollector reads the agent's state on each scrape: the tasks it
// runs, its GPUs' health, the command in force. It is registered once Run
// has built the runner and the health tracker.
type stateCollector struct{ a *Agent }

func (c stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{tasksRunningDesc, taskSlotsDesc, gpuHealthDesc, gpusDesc, workerCommandDesc, reportSpoolDesc, reportSpoolBytesDesc} {
		ch <- d
	}
}

func (c stateCollector) Collect(ch chan<- prometheus.Metric) {
	a := c.a
	ch <- prometheus.MustNewConstMetric(tasksRunningDesc, prometheus.GaugeValue, float64(len(a.runner.Running())))
	ch <- prometheus.MustNewConstMetric(taskSlotsDesc, prometheus.GaugeValue, float64(a.maxTasks()))
	records, bytes := a.reports.spool.Len()
	ch <- prometheus.MustNewConstMetric(reportSpoolDesc, prometheus.GaugeValue, float64(records))
	ch <- prometheus.MustNewConstMetric(reportSpoolBytesDesc, prometheus.GaugeValue, float64(bytes))
	byState := map[health.State]int{}
	for _, d := range a.gpuStates() {
		byState[d.state]++
		for _, s := range healthStates {
			ch <- prometheus.MustNewConstMetric(gpuHealthDesc, prometheus.GaugeValue, oneIf(s == d.state), d.uuid, strconv.Itoa(d.index), string(s))
		}
	}
	for _, s := range healthStates {
		ch <- prometheus.MustNewConstMetric(gpusDesc, prometheus.GaugeValue, float64(byState[s]), string(s))
	}
	command, _ := a.orders.current()
	for _, cmd := range workerCommands {
		ch <- prometheus.MustNewConstMetric(workerCommandDesc, prometheus.GaugeValue, oneIf(cmd == command), cmd)
	}
}

// gpuState is one GPU's health as the metrics show it.
type gpuState struct {
	uuid  string
	index int
	state health.State
}

// gpuStates is each GPU's health: the tracker's, or for a device source
// that does not watch health, healthy or unhealthy as discovered.
func (a *Agent) gpuStates() []gpuState {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]gpuState, 0, len(a.devices))
	for _, d := range a.devices {
		st := health.Unhealthy
		switch {
		case a.health != nil:
			st = a.health.tracker.Status(cmp.Or(d.Parent, d.UUID)).State
		case d.Healthy:
			st = health.Healthy
		}
		out = append(out, gpuState{uuid: d.UUID, index: d.Index, state: st})
	}
	return out
}

func oneIf(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
