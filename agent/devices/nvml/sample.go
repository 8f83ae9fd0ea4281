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
			out = append(out, s)
		}
		return out, errs
	}
}
