//go:build cgo && linux

package agent

import (
	"log/slog"
	"slices"
	"testing"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gpulayer/gpulayer/agent/devices/nvml"
	"github.com/gpulayer/gpulayer/agent/devices/nvml/nvmltest"
	"github.com/gpulayer/gpulayer/agent/runner"
	"github.com/gpulayer/gpulayer/sdk/api"
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
		{TaskID: "t-over", AttemptID: "a-over", GPU: gpu, MiB: 10240, Mode: api.SharingUnenforced},
		{TaskID: "t-under", AttemptID: "a-under", GPU: gpu, MiB: 20480, Mode: api.SharingUnenforced},
	}}
	w := &shareWatchdog{holder: holder, attemptOf: pidTable{7001: {"a-over", 0}, 7002: {"a-under", 0}}.attemptOf, log: slog.New(slog.DiscardHandler), blind: map[string]bool{}}
	whole := func(pid uint32, gib uint64) gonvml.ProcessInfo {
		return gonvml.ProcessInfo{Pid: pid, UsedGpuMemory: gib << 30, GpuInstanceId: 0xFFFFFFFF, ComputeInstanceId: 0xFFFFFFFF}
	}

	m.Fail(0, "GetComputeRunningProcesses", gonvml.ERROR_UNKNOWN, nvmltest.Always)
	samples, _, err := src.Sample(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got := w.check(samples); len(got) != 0 {
		t.Fatalf("stopped %v while the processes could not be listed", got)
	}

	m = nvmltest.New("dgxa100", nvmltest.StableUUIDs())
	m.SetProcesses(0, whole(7001, 12), whole(7002, 19))
	src2, err := nvml.OpenInterface(t.Context(), nil, m.Interface())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = src2.Close() })
	if samples, _, err = src2.Sample(t.Context()); err != nil {
		t.Fatal(err)
	}
	got := w.check(samples)
	if len(got) != 1 || got[0].AttemptID != "a-over" || !slices.Equal(holder.stopped, []string{"a-over"}) {
		t.Fatalf("stopped %+v, want a-over only", got)
	}
	if want := "used 12288 MiB of GPU " + gpu + ", over its share of 10240 MiB (gpu_memory_mib)"; got[0].Reason != want {
		t.Fatalf("reason %q, want %q", got[0].Reason, want)
	}
}
