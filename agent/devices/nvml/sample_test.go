//go:build cgo && linux

package nvml_test

import (
	"slices"
	"testing"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gpulayer/gpulayer/agent/devices/nvml"
	"github.com/gpulayer/gpulayer/agent/devices/nvml/nvmltest"
)

// A sample lists each GPU's compute processes and MPS clients with the
// memory each uses (MiB; unknown where NVML says "not available"), says
// when they could not all be read, and counts a failed call.
func TestSampleReadsProcesses(t *testing.T) {
	m := nvmltest.New("dgxa100", nvmltest.StableUUIDs())
	m.SetProcesses(0,
		gonvml.ProcessInfo{Pid: 4242, UsedGpuMemory: 30 << 30, GpuInstanceId: 0xFFFFFFFF, ComputeInstanceId: 0xFFFFFFFF},
		gonvml.ProcessInfo{Pid: 4343, UsedGpuMemory: ^uint64(0), GpuInstanceId: 0xFFFFFFFF, ComputeInstanceId: 0xFFFFFFFF})
	m.SetProcesses(1)
	m.Fail(2, "GetComputeRunningProcesses", gonvml.ERROR_UNKNOWN, nvmltest.Always)
	m.SetMPSProcesses(2, gonvml.ProcessInfo{Pid: 5000, UsedGpuMemory: 1 << 30}) // read, but the compute list failed
	client := gonvml.ProcessInfo{Pid: 6000, UsedGpuMemory: 2 << 30, GpuInstanceId: 0xFFFFFFFF, ComputeInstanceId: 0xFFFFFFFF}
	m.SetProcesses(4, client)
	m.Fail(4, "GetMPSComputeRunningProcesses", gonvml.ERROR_UNKNOWN, nvmltest.Always)
	m.SetProcesses(5, client)
	m.SetMPSProcesses(5, client, gonvml.ProcessInfo{Pid: 6001, UsedGpuMemory: 3 << 30})
	src, err := nvml.OpenInterface(t.Context(), nil, m.Interface())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = src.Close() })
	samples, errs, err := src.Sample(t.Context())
	if err != nil || len(samples) < 4 {
		t.Fatalf("samples %d, err %v", len(samples), err)
	}
	want := []nvml.Process{{PID: 4242, UsedMiB: 30 << 10, UsedKnown: true}, {PID: 4343}}
	if s := samples[0]; !s.ProcessesRead || !slices.Equal(s.Processes, want) {
		t.Fatalf("GPU 0: read %v, processes %+v, want %+v", s.ProcessesRead, s.Processes, want)
	}
	if s := samples[1]; !s.ProcessesRead || len(s.Processes) != 0 {
		t.Fatalf("GPU 1 (no process): read %v, processes %+v", s.ProcessesRead, s.Processes)
	}
	// The compute list failing (whatever the MPS list says), unconfigured
	// (not supported), the MPS list failing: none read.
	for _, i := range []int{2, 3, 4} {
		if s := samples[i]; s.ProcessesRead || len(s.Processes) != 0 {
			t.Fatalf("GPU %d: read %v, processes %+v, want none read", i, s.ProcessesRead, s.Processes)
		}
	}
	want = []nvml.Process{{PID: 6000, UsedMiB: 2 << 10, UsedKnown: true}, {PID: 6001, UsedMiB: 3 << 10, UsedKnown: true}}
	if s := samples[5]; !s.ProcessesRead || !slices.Equal(s.Processes, want) {
		t.Fatalf("GPU 5 (under MPS): read %v, processes %+v, want %+v", s.ProcessesRead, s.Processes, want)
	}
	for _, call := range []string{"GetComputeRunningProcesses", "GetMPSComputeRunningProcesses"} {
		if !slices.Contains(errs, nvml.CallError{Call: call, Code: gonvml.ErrorString(gonvml.ERROR_UNKNOWN)}) {
			t.Fatalf("call errors %+v, want the failed %s counted", errs, call)
		}
	}
}
