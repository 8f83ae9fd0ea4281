package agent

import (
	"context"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gpulayer/gpulayer/agent/devices/nvml"
)

// GPU metrics under the names NVIDIA's DCGM exporter uses where the
// meaning is the same (DCGM_FI_DEV_*, so existing dashboards read them),
// each with the task running on the GPU; plus counts no peer has: XIDs
// seen (gpulayer_gpu_xid_total) and NVML calls that failed
// (gpulayer_nvml_errors_total). The GPUs are sampled in the background
// every Config.GPUSampleInterval; a scrape reads the last sample and
// never waits on NVML.

// GPUSampler is a device source that reads GPU metrics (nvml.Source).
type GPUSampler interface {
	Sample(ctx context.Context) ([]nvml.Sample, []nvml.CallError, error)
}

// DefaultGPUSampleInterval is how often GPUs are sampled by default.
const DefaultGPUSampleInterval = 10 * time.Second

// sampleGPUs samples the GPUs at once and then every interval until ctx
// ends, keeping the last sample for the metrics.
func (a *Agent) sampleGPUs(ctx context.Context, s GPUSampler) {
	every := a.cfg.GPUSampleInterval
	if every <= 0 {
		every = DefaultGPUSampleInterval
	}
	for {
		samples, errs, err := s.Sample(ctx)
		if err != nil {
			a.log.Debug("GPU metrics not sampled", "error", err)
			return
		}
		for _, e := range errs {
			a.cfg.Metrics.nvmlFailed(e.Call, e.Code)
		}
		a.mu.Lock()
		a.gpuSamples = samples
		a.mu.Unlock()
		if a.shares != nil {
			a.shares.check(samples)
		}
		select {
		case <-ctx.Done():
			return
		case <-a.cfg.Clock.After(every):
		}
	}
}

// gpuLabels are DCGM exporter's, but for the model: DCGM's "modelName" is
// camelCase, which promtool rejects, so the model is "model", as on the
// coordinator's GPU gauges.
var gpuLabels = []string{"gpu", "UUID", "model", "job_id", "task_id"}

// shareLabels name a task's share of a GPU: by attempt too, since while
// an attempt supersedes another of the same task on this agent both run.
var shareLabels = []string{"UUID", "job_id", "task_id", "attempt_id"}

var (
	shareDesc     = prometheus.NewDesc("gpulayer_gpu_share_mib", "GPU memory share of a task sharing the GPU (gpu_memory_mib, in MiB).", shareLabels, nil)
	shareUsedDesc = prometheus.NewDesc("gpulayer_gpu_share_used_mib", "GPU memory used by the processes of a task sharing the GPU at the last sample (in MiB; absent while NVML cannot list them).", shareLabels, nil)
)

var (
	gpuUtilDesc  = prometheus.NewDesc("DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %).", gpuLabels, nil)
	memUtilDesc  = prometheus.NewDesc("DCGM_FI_DEV_MEM_COPY_UTIL", "Memory utilization (in %).", gpuLabels, nil)
	fbUsedDesc   = prometheus.NewDesc("DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB).", gpuLabels, nil)
	fbFreeDesc   = prometheus.NewDesc("DCGM_FI_DEV_FB_FREE", "Framebuffer memory free (in MiB).", gpuLabels, nil)
	gpuTempDesc  = prometheus.NewDesc("DCGM_FI_DEV_GPU_TEMP", "GPU temperature (in C).", gpuLabels, nil)
	gpuPowerDesc = prometheus.NewDesc("DCGM_FI_DEV_POWER_USAGE", "Power draw (in W).", gpuLabels, nil)
)

// gpuCollector reports the last GPU sample, each GPU with the task that
// holds it whole (empty job_id and task_id when none does, and on a GPU
// tasks share), and each share with what its processes used.
type gpuCollector struct{ a *Agent }

func (c gpuCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{gpuUtilDesc, memUtilDesc, fbUsedDesc, fbFreeDesc, gpuTempDesc, gpuPowerDesc, shareDesc, shareUsedDesc} {
		ch <- d
	}
}

func (c gpuCollector) Collect(ch chan<- prometheus.Metric) {
	a := c.a
	a.mu.Lock()
	samples := a.gpuSamples
	a.mu.Unlock()
	holders := a.runner.Holders()
	for _, s := range samples {
		h := holders[s.UUID]
		labels := []string{strconv.Itoa(s.Index), s.UUID, s.Name, h.JobID, h.TaskID}
		gauge := func(d *prometheus.Desc, v float64) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
		}
		if s.GPUUtil != nil {
			gauge(gpuUtilDesc, float64(*s.GPUUtil))
			gauge(memUtilDesc, float64(*s.MemUtil))
		}
		if s.FBUsedMiB != nil {
			gauge(fbUsedDesc, float64(*s.FBUsedMiB))
			gauge(fbFreeDesc, float64(*s.FBFreeMiB))
		}
		if s.TempC != nil {
			gauge(gpuTempDesc, float64(*s.TempC))
		}
		if s.PowerWatts != nil {
			gauge(gpuPowerDesc, *s.PowerWatts)
		}
	}
	if a.shares == nil {
		return
	}
	for _, u := range a.shares.lastUses() {
		labels := []string{u.Share.GPU, u.Share.JobID, u.Share.TaskID, u.Share.AttemptID}
		ch <- prometheus.MustNewConstMetric(shareDesc, prometheus.GaugeValue, float64(u.Share.MiB), labels...)
		if u.Known {
			ch <- prometheus.MustNewConstMetric(shareUsedDesc, prometheus.GaugeValue, float64(u.UsedMiB), labels...)
		}
	}
}
