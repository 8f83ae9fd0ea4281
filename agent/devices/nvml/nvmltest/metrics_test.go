//go:build cgo && linux

package nvmltest

import (
	"reflect"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

func TestMetrics(t *testing.T) {
	const gib = 1 << 30
	total := uint64(81920) << 20 // DGX H100: 80 GiB per GPU
	procs := []nvml.ProcessInfo{
		{Pid: 4242, UsedGpuMemory: 3 * gib, GpuInstanceId: NoInstance, ComputeInstanceId: NoInstance},
		{Pid: 4343, UsedGpuMemory: gib, GpuInstanceId: NoInstance, ComputeInstanceId: NoInstance},
	}
	tests := []struct {
		name string
		set  func(m *Machine)
		// get reads device 2 (the one every set call configures).
		get  func(lib nvml.Interface, d nvml.Device) (any, nvml.Return)
		want any
		ret  nvml.Return
	}{
		{"utilization", func(m *Machine) { m.SetUtilization(2, 75, 40) },
			func(lib nvml.Interface, d nvml.Device) (any, nvml.Return) { return lib.DeviceGetUtilizationRates(d) },
			nvml.Utilization{Gpu: 75, Memory: 40}, nvml.SUCCESS},
		{"memory from the mock", func(*Machine) {},
			func(lib nvml.Interface, d nvml.Device) (any, nvml.Return) { return d.GetMemoryInfo() },
			nvml.Memory{Total: total}, nvml.SUCCESS},
		{"memory used", func(m *Machine) { m.SetMemoryUsed(2, 10*gib) },
			func(lib nvml.Interface, d nvml.Device) (any, nvml.Return) { return lib.DeviceGetMemoryInfo(d) },
			nvml.Memory{Total: total, Used: 10 * gib, Free: total - 10*gib}, nvml.SUCCESS},
		{"memory used, v2", func(m *Machine) { m.SetMemoryUsed(2, 10*gib) },
			func(lib nvml.Interface, d nvml.Device) (any, nvml.Return) {
				mem, ret := d.GetMemoryInfo_v2()
				return [3]uint64{mem.Total, mem.Used, mem.Free}, ret
			},
			[3]uint64{total, 10 * gib, total - 10*gib}, nvml.SUCCESS},
		{"temperature", func(m *Machine) { m.SetTemperature(2, 83) },
			func(lib nvml.Interface, d nvml.Device) (any, nvml.Return) {
				return d.GetTemperature(nvml.TEMPERATURE_GPU)
			},
			uint32(83), nvml.SUCCESS},
		{"temperature of another sensor", func(m *Machine) { m.SetTemperature(2, 83) },
			func(lib nvml.Interface, d nvml.Device) (any, nvml.Return) {
				return d.GetTemperature(nvml.TEMPERATURE_GPU_MAX)
			},
			uint32(0), nvml.ERROR_NOT_SUPPORTED},
		{"power", func(m *Machine) { m.SetPowerUsage(2, 512_000) },
			func(lib nvml.Interface, d nvml.Device) (any, nvml.Return) { return lib.DeviceGetPowerUsage(d) },
			uint32(512_000), nvml.SUCCESS},
		{"set on all devices", func(m *Machine) { m.SetPowerUsage(All, 700_000) },
			func(lib nvml.Interface, d nvml.Device) (any, nvml.Return) { return d.GetPowerUsage() },
			uint32(700_000), nvml.SUCCESS},
		{"set on another device", func(m *Machine) { m.SetPowerUsage(1, 700_000) },
			func(lib nvml.Interface, d nvml.Device) (any, nvml.Return) { return d.GetPowerUsage() },
			uint32(0), nvml.ERROR_NOT_SUPPORTED},
		{"ECC uncorrected volatile", func(m *Machine) {
			m.SetECCErrors(2, nvml.MEMORY_ERROR_TYPE_UNCORRECTED, nvml.VOLATILE_ECC, 3)
			m.SetECCErrors(2, nvml.MEMORY_ERROR_TYPE_CORRECTED, nvml.AGGREGATE_ECC, 120)
		}, func(lib nvml.Interface, d nvml.Device) (any, nvml.Return) {
			return lib.DeviceGetTotalEccErrors(d, nvml.MEMORY_ERROR_TYPE_UNCORRECTED, nvml.VOLATILE_ECC)
		}, uint64(3), nvml.SUCCESS},
		{"ECC corrected aggregate", func(m *Machine) {
			m.SetECCErrors(2, nvml.MEMORY_ERROR_TYPE_UNCORRECTED, nvml.VOLATILE_ECC, 3)
			m.SetECCErrors(2, nvml.MEMORY_ERROR_TYPE_CORRECTED, nvml.AGGREGATE_ECC, 120)
		}, func(lib nvml.Interface, d nvml.Device) (any, nvml.Return) {
			return d.GetTotalEccErrors(nvml.MEMORY_ERROR_TYPE_CORRECTED, nvml.AGGREGATE_ECC)
		}, uint64(120), nvml.SUCCESS},
		{"ECC counter not set", func(m *Machine) {
			m.SetECCErrors(2, nvml.MEMORY_ERROR_TYPE_UNCORRECTED, nvml.VOLATILE_ECC, 3)
		}, func(lib nvml.Interface, d nvml.Device) (any, nvml.Return) {
			return d.GetTotalEccErrors(nvml.MEMORY_ERROR_TYPE_CORRECTED, nvml.VOLATILE_ECC)
		}, uint64(0), nvml.ERROR_NOT_SUPPORTED},
		{"retired pages", func(m *Machine) {
			m.SetRetiredPages(2, nvml.PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR, 0x1000, 0x2000)
		}, func(lib nvml.Interface, d nvml.Device) (any, nvml.Return) {
			return d.GetRetiredPages(nvml.PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR)
		}, []uint64{0x1000, 0x2000}, nvml.SUCCESS},
		{"retired pages, v2", func(m *Machine) {
			m.SetRetiredPages(2, nvml.PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR, 0x1000)
		}, func(lib nvml.Interface, d nvml.Device) (any, nvml.Return) {
			pages, times, ret := d.GetRetiredPages_v2(nvml.PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR)
			return [][]uint64{pages, times}, ret
		}, [][]uint64{{0x1000}, {0}}, nvml.SUCCESS},
		{"retired pages pending", func(m *Machine) { m.SetRetiredPagesPending(2, true) },
			func(lib nvml.Interface, d nvml.Device) (any, nvml.Return) { return d.GetRetiredPagesPendingStatus() },
			nvml.FEATURE_ENABLED, nvml.SUCCESS},
		{"remapped rows", func(m *Machine) {
			m.SetRemappedRows(2, RemappedRows{Correctable: 1, Uncorrectable: 2, Pending: true})
		}, func(lib nvml.Interface, d nvml.Device) (any, nvml.Return) {
			c, u, pending, failure, ret := lib.DeviceGetRemappedRows(d)
			return RemappedRows{c, u, pending, failure}, ret
		}, RemappedRows{Correctable: 1, Uncorrectable: 2, Pending: true}, nvml.SUCCESS},
		{"processes", func(m *Machine) { m.SetProcesses(2, procs...) },
			func(lib nvml.Interface, d nvml.Device) (any, nvml.Return) {
				return lib.DeviceGetComputeRunningProcesses(d)
			},
			procs, nvml.SUCCESS},
		{"no processes", func(m *Machine) { m.SetProcesses(2) },
			func(lib nvml.Interface, d nvml.Device) (any, nvml.Return) {
				p, ret := d.GetComputeRunningProcesses()
				return len(p), ret
			}, 0, nvml.SUCCESS},
		{"MPS clients", func(m *Machine) { m.SetMPSProcesses(2, procs...) },
			func(lib nvml.Interface, d nvml.Device) (any, nvml.Return) {
				return d.GetMPSComputeRunningProcesses()
			},
			procs, nvml.SUCCESS},
		{"MPS clients not set", func(*Machine) {},
			func(lib nvml.Interface, d nvml.Device) (any, nvml.Return) {
				p, ret := d.GetMPSComputeRunningProcesses()
				return len(p), ret
			}, 0, nvml.ERROR_NOT_SUPPORTED},
		{"processes not set", func(*Machine) {},
			func(lib nvml.Interface, d nvml.Device) (any, nvml.Return) {
				p, ret := d.GetComputeRunningProcesses()
				return len(p), ret
			}, 0, nvml.ERROR_NOT_SUPPORTED},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := New(DGXH100)
			tt.set(m)
			lib := m.Interface()
			got, ret := tt.get(lib, handle(t, lib, 2))
			if ret != tt.ret || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v %v, want %v %v", got, ret, tt.want, tt.ret)
			}
		})
	}
}

func TestSetMemoryUsedRejectsTooMuch(t *testing.T) {
	m := New(DGXA100)
	if msg := panicMessage(func() { m.SetMemoryUsed(0, 41<<30) }); msg == "" {
		t.Error("no panic for 41 GiB used on a 40 GiB GPU")
	}
}
