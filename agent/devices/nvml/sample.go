//go:build cgo && linux

package nvml

import (
	"context"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
)

// samplerOf reads samples from lib.
func samplerOf(lib gonvml.Interface) func(ctx context.Context) ([]Sample, []CallError) {
	return func(ctx context.Context) ([]Sample, []CallError) {
		var errs []CallError
		failed := func(call string, ret gonvml.Return) bool {
			switch ret {
			case gonvml.SUCCESS:
				return false
			case gonvml.ERROR_NOT_SUPPORTED:
				return true
			}
			errs = append(errs, CallError{Call: call, Code: gonvml.ErrorString(ret)})
			return true
		}
		n, ret := lib.DeviceGetCount()
		if failed("DeviceGetCount", ret) {
			return nil, errs
		}
		out := make([]Sample, 0, n)
		for i := range n {
			if ctx.Err() != nil {
				return out, errs
			}
			h, ret := lib.DeviceGetHandleByIndex(i)
			if failed("DeviceGetHandleByIndex", ret) || h == nil {
				continue
			}
			s := Sample{Index: i}
			if uuid, ret := h.GetUUID(); !failed("GetUUID", ret) {
				s.UUID = uuid
			} else {
				continue
			}
			if name, ret := h.GetName(); !failed("GetName", ret) {
				s.Name = name
			}
			if u, ret := h.GetUtilizationRates(); !failed("GetUtilizationRates", ret) {
				s.GPUUtil, s.MemUtil = &u.Gpu, &u.Memory
			}
			if m, ret := h.GetMemoryInfo(); !failed("GetMemoryInfo", ret) && m.Used+m.Free > 0 {
				used, free := m.Used>>20, m.Free>>20
				s.FBUsedMiB, s.FBFreeMiB = &used, &free
			}
			if c, ret := h.GetTemperature(gonvml.TEMPERATURE_GPU); !failed("GetTemperature", ret) {
				s.TempC = &c
			}
			if mw, ret := h.GetPowerUsage(); !failed("GetPowerUsage", ret) {
				w := float64(mw) / 1000
				s.PowerWatts = &w
			}
			s.Processes, s.ProcessesRead = processesOf(h, failed)
			out = append(out, s)
		}
		return out, errs
	}
}

// processesOf reads the compute processes on a GPU, and the MPS clients
// on it where MPS serves it: read is false when neither list could be
// read. A process in both lists counts once.
func processesOf(h gonvml.Device, failed func(string, gonvml.Return) bool) (procs []Process, read bool) {
	seen := map[uint32]int{}
	for _, list := range []struct {
		call string
		get  func() ([]gonvml.ProcessInfo, gonvml.Return)
	}{
		{"GetComputeRunningProcesses", h.GetComputeRunningProcesses},
		{"GetMPSComputeRunningProcesses", h.GetMPSComputeRunningProcesses},
	} {
		infos, ret := list.get()
		if failed(list.call, ret) {
			continue
		}
		read = true
		for _, p := range infos {
			if _, dup := seen[p.Pid]; dup {
				continue
			}
			seen[p.Pid] = len(procs)
			// NVML says "not available" with all ones.
			known := p.UsedGpuMemory != ^uint64(0)
			var mib uint64
			if known {
				mib = p.UsedGpuMemory >> 20
			}
			procs = append(procs, Process{PID: p.Pid, UsedMiB: mib, UsedKnown: known})
		}
	}
	return procs, read
}
