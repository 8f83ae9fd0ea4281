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
// on it where MPS serves it. read is true only when the compute list was
// read and the MPS list was read or is not supported (no MPS there): a
// list that failed may hide a process over its share, so the GPU counts
// as unread. A process in both lists counts once.
func processesOf(h gonvml.Device, failed func(string, gonvml.Return) bool) (procs []Process, read bool) {
	seen := map[uint32]bool{}
	add := func(infos []gonvml.ProcessInfo) {
		for _, p := range infos {
			if seen[p.Pid] {
				continue
			}
			seen[p.Pid] = true
			// NVML says "not available" with all ones.
			known := p.UsedGpuMemory != ^uint64(0)
			var mib uint64
			if known {
				mib = p.UsedGpuMemory >> 20
			}
			procs = append(procs, Process{PID: p.Pid, UsedMiB: mib, UsedKnown: known})
		}
	}
	compute, ret := h.GetComputeRunningProcesses()
	if failed("GetComputeRunningProcesses", ret) {
		return nil, false
	}
	add(compute)
	mps, ret := h.GetMPSComputeRunningProcesses()
	switch {
	case ret == gonvml.ERROR_NOT_SUPPORTED:
	case failed("GetMPSComputeRunningProcesses", ret):
		return nil, false
	default:
		add(mps)
	}
	return procs, true
}
