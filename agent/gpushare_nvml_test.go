//go:build cgo && linux

package agent

import (
	"log/slog"
	"slices"
	"strings"
	"testing"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gpulayer/gpulayer/agent/devices/nvml"
	"github.com/gpulayer/gpulayer/agent/devices/nvml/nvmltest"
	"github.com/gpulayer/gpulayer/agent/runner"
)

// On the mock DGX A100: the watchdog reads the process table NVML gives
// through the background sample, stops the task over its share and
// leaves the one under it; when the listing fails, it stops nothing.
func TestShareWatchdogOnNVML(t *testing.T) {
	m := nvmltest.New("dgxa100", nvmltest.StableUUIDs())
	src, err := nvml.OpenInterface(t.Context(), nil, m.Interface())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = src.Close() })
	devs, err := src.Devices(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	gpu := devs[0].UUID
	holder := &fakeShares{shares: []runner.Share{
		{TaskID: "t-over", AttemptID: "a-over", GPU: gpu, MiB: 10240, UID: 61000, OwnUID: true},
		{TaskID: "t-under", AttemptID: "a-under", GPU: gpu, MiB: 20480, UID: 61001, OwnUID: true},
	}}
	w := (&pidTable{procs: map[uint32]pidInfo{7001: {"a-over", 61000}, 7002: {"a-under", 61001}}}).watchdog(holder, slog.New(slog.DiscardHandler))
	whole := func(pid uint32, gib uint64) gonvml.ProcessInfo {
		return gonvml.ProcessInfo{Pid: pid, UsedGpuMemory: gib << 30, GpuInstanceId: 0xFFFFFFFF, ComputeInstanceId: 0xFFFFFFFF}
	}

	// The task over its share is on the GPU from the start: while the
	// listing fails, the watchdog cannot see it and stops nothing.
	m.SetProcesses(0, whole(7001, 12), whole(7002, 19))
	m.Fail(0, "GetComputeRunningProcesses", gonvml.ERROR_UNKNOWN, nvmltest.Always)
	samples, _, err := src.Sample(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	w.check(samples)
	if len(holder.stopped) != 0 {
		t.Fatalf("stopped %v while the processes could not be listed", holder.stopped)
	}

	m.ClearFailures()
	if samples, _, err = src.Sample(t.Context()); err != nil {
		t.Fatal(err)
	}
	w.check(samples)
	if !slices.Equal(holder.stopped, []string{"a-over"}) {
		t.Fatalf("stopped %v, want a-over only", holder.stopped)
	}
	if want := "used 12288 MiB of GPU " + gpu + ", over its share of 10240 MiB (gpu_memory_mib)"; holder.reasons[0] != want {
		t.Fatalf("reason %q, want %q", holder.reasons[0], want)
	}
}

// Each share is a series of its own, by task: its size, and what its
// processes used at the last sample, absent while they cannot be read.
// The shared GPU's DCGM series name no task.
func TestShareMetrics(t *testing.T) {
	table := &pidTable{procs: map[uint32]pidInfo{100: {"a-1", 61000}, 200: {"a-2", 61001}}}
	holder := &fakeShares{shares: []runner.Share{
		{TaskID: "t-1", AttemptID: "a-1", JobID: "j-1", GPU: "GPU-0", MiB: 4096, UID: 61000, OwnUID: true},
		{TaskID: "t-2", AttemptID: "a-2", JobID: "j-2", GPU: "GPU-0", MiB: 8192, UID: 61001, OwnUID: true},
		{TaskID: "t-3", AttemptID: "a-3", JobID: "j-3", GPU: "GPU-1", MiB: 1024, UID: 61002, OwnUID: true},
	}}
	util := uint32(55)
	samples := []nvml.Sample{
		{UUID: "GPU-0", Index: 0, GPUUtil: &util, MemUtil: &util, ProcessesRead: true, Processes: []nvml.Process{proc(100, 3000), proc(200, 5000)}},
		{UUID: "GPU-1", Index: 1}, // processes not read
	}
	m := NewMetrics()
	a := &Agent{cfg: Config{Metrics: m}, runner: runner.New(runner.Config{}), gpuSamples: samples,
		shares: table.watchdog(holder, slog.New(slog.DiscardHandler))}
	a.shares.check(samples)
	if err := m.reg.Register(gpuCollector{a}); err != nil {
		t.Fatal(err)
	}
	task := func(id string) map[string]string {
		return map[string]string{"task_id": id, "job_id": "j" + strings.TrimPrefix(id, "t")}
	}
	for _, c := range []struct {
		name string
		task string
		want float64
	}{
		{"gpulayer_gpu_share_mib", "t-1", 4096},
		{"gpulayer_gpu_share_used_mib", "t-1", 3000},
		{"gpulayer_gpu_share_mib", "t-2", 8192},
		{"gpulayer_gpu_share_used_mib", "t-2", 5000},
		{"gpulayer_gpu_share_mib", "t-3", 1024},
	} {
		if got := gauge(t, m, c.name, task(c.task)); got != c.want {
			t.Errorf("%s{task %s} = %v, want %v", c.name, c.task, got, c.want)
		}
	}
	if hasSeries(t, m, "gpulayer_gpu_share_used_mib", task("t-3")) {
		t.Error("a share whose processes were not read has a used series")
	}
	if got := gauge(t, m, "DCGM_FI_DEV_GPU_UTIL", map[string]string{"UUID": "GPU-0", "job_id": "", "task_id": ""}); got != 55 {
		t.Errorf("the shared GPU's utilization, with no task, = %v, want 55", got)
	}
	lintClean(t, m)
}
