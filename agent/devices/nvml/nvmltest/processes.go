//go:build cgo && linux

package nvmltest

import (
	"slices"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// SetProcesses sets the compute processes GetComputeRunningProcesses
// reports for device i (or, with All, every device). Calling it with none
// says no process is running; until it is called the query is
// unconfigured. For processes on the whole GPU set GpuInstanceId and
// ComputeInstanceId to NoInstance, as NVML does.
func (m *Machine) SetProcesses(i int, procs ...nvml.ProcessInfo) {
	for _, j := range m.indices(i) {
		m.mu.Lock()
		m.metrics[j].processes = append([]nvml.ProcessInfo{}, procs...)
		m.mu.Unlock()
	}
}

// SetMPSProcesses sets the MPS clients GetMPSComputeRunningProcesses
// reports for device i (or, with All, every device), as SetProcesses does
// for compute processes; until it is called the query is unconfigured
// (a GPU no MPS daemon serves).
func (m *Machine) SetMPSProcesses(i int, procs ...nvml.ProcessInfo) {
	for _, j := range m.indices(i) {
		m.mu.Lock()
		m.metrics[j].mpsClients = append([]nvml.ProcessInfo{}, procs...)
		m.mu.Unlock()
	}
}

// processAnswers are device i's answers about running processes.
func (m *Machine) processAnswers(i int) map[string]any {
	list := func(get func(*metrics) []nvml.ProcessInfo) func() ([]nvml.ProcessInfo, nvml.Return) {
		return func() ([]nvml.ProcessInfo, nvml.Return) {
			m.mu.Lock()
			defer m.mu.Unlock()
			if p := get(&m.metrics[i]); p != nil {
				return slices.Clone(p), nvml.SUCCESS
			}
			return nil, unconfigured
		}
	}
	return map[string]any{
		"GetComputeRunningProcesses":    list(func(mt *metrics) []nvml.ProcessInfo { return mt.processes }),
		"GetMPSComputeRunningProcesses": list(func(mt *metrics) []nvml.ProcessInfo { return mt.mpsClients }),
	}
}
