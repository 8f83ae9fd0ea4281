//go:build cgo && linux

package nvmltest

import (
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// metrics is what one device's metric queries answer; nil means not set.
// Guarded by Machine.mu.
type metrics struct {
	utilization  *nvml.Utilization
	memoryUsed   *uint64
	temperature  *uint32
	power        *uint32
	ecc          ecc
	processes    []nvml.ProcessInfo // nil when not set
	mpsClients   []nvml.ProcessInfo // nil when not set
	clocksEvents *uint64
}

// SetUtilization sets the GPU and memory utilization, in percent, that
// GetUtilizationRates reports for device i (or, with All, every device).
func (m *Machine) SetUtilization(i int, gpu, memory uint32) {
	for _, j := range m.indices(i) {
		m.mu.Lock()
		m.metrics[j].utilization = &nvml.Utilization{Gpu: gpu, Memory: memory}
		m.mu.Unlock()
	}
}

// SetMemoryUsed sets the bytes of memory in use on device i (or, with All,
// every device). GetMemoryInfo and GetMemoryInfo_v2 then report the mock's
// total, this as used and the rest as free; until then GetMemoryInfo gives
// the mock server's answer (total only) and GetMemoryInfo_v2 is
// unconfigured. It panics if used exceeds the total.
func (m *Machine) SetMemoryUsed(i int, used uint64) {
	for _, j := range m.indices(i) {
		if total := m.devs[j].MemoryInfo.Total; used > total {
			panic(fmt.Sprintf("nvmltest: SetMemoryUsed(%d, %d): device has only %d bytes", j, used, total))
		}
		m.mu.Lock()
		m.metrics[j].memoryUsed = &used
		m.mu.Unlock()
	}
}

// SetTemperature sets the GPU temperature, in degrees Celsius, that
// GetTemperature(nvml.TEMPERATURE_GPU) reports for device i (or, with
// All, every device).
func (m *Machine) SetTemperature(i int, celsius uint32) {
	for _, j := range m.indices(i) {
		m.mu.Lock()
		m.metrics[j].temperature = &celsius
		m.mu.Unlock()
	}
}

// SetPowerUsage sets the power draw, in milliwatts, that GetPowerUsage
// reports for device i (or, with All, every device).
func (m *Machine) SetPowerUsage(i int, milliwatts uint32) {
	for _, j := range m.indices(i) {
		m.mu.Lock()
		m.metrics[j].power = &milliwatts
		m.mu.Unlock()
	}
}

// metricAnswers are device i's answers about utilization, memory,
// temperature and power.
func (m *Machine) metricAnswers(i int) map[string]any {
	total := m.devs[i].MemoryInfo.Total // fixed by the mock server
	return map[string]any{
		"GetUtilizationRates": func() (nvml.Utilization, nvml.Return) {
			m.mu.Lock()
			defer m.mu.Unlock()
			if u := m.metrics[i].utilization; u != nil {
				return *u, nvml.SUCCESS
			}
			return nvml.Utilization{}, unconfigured
		},
		"GetMemoryInfo": func() (nvml.Memory, nvml.Return) {
			m.mu.Lock()
			defer m.mu.Unlock()
			if used := m.metrics[i].memoryUsed; used != nil {
				return nvml.Memory{Total: total, Used: *used, Free: total - *used}, nvml.SUCCESS
			}
			return nvml.Memory{}, unconfigured
		},
		"GetMemoryInfo_v2": func() (nvml.Memory_v2, nvml.Return) {
			m.mu.Lock()
			defer m.mu.Unlock()
			if used := m.metrics[i].memoryUsed; used != nil {
				return nvml.Memory_v2{Version: nvml.STRUCT_VERSION(nvml.Memory_v2{}, 2), Total: total, Used: *used, Free: total - *used}, nvml.SUCCESS
			}
			return nvml.Memory_v2{}, unconfigured
		},
		"GetTemperature": func(sensor nvml.TemperatureSensors) (uint32, nvml.Return) {
			m.mu.Lock()
			defer m.mu.Unlock()
			if t := m.metrics[i].temperature; t != nil && sensor == nvml.TEMPERATURE_GPU {
				return *t, nvml.SUCCESS
			}
			return 0, unconfigured
		},
		"GetPowerUsage": func() (uint32, nvml.Return) {
			m.mu.Lock()
			defer m.mu.Unlock()
			if p := m.metrics[i].power; p != nil {
				return *p, nvml.SUCCESS
			}
			return 0, unconfigured
		},
	}
}
