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
