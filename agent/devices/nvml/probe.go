//go:build cgo && linux

package nvml

import (
	"cmp"
	"context"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
)

// ProbeSystem loads the system's NVML and probes it (Probe). It is what
// scripts/gpu-check.sh records on a real GPU machine.
func ProbeSystem(ctx context.Context) (ProbeReport, error) {
	lib := gonvml.New()
	if ret := lib.Init(); ret != gonvml.SUCCESS {
		return ProbeReport{}, queryError("initialise NVML", ret)
	}
	defer lib.Shutdown()
	return Probe(ctx, lib), nil
}

// Probe asks lib, for each GPU, what the health watcher relies on: the
// event types it supports, whether the watched events register, whether
// the driver has the recovery-action field, the processes it lists with
// their memory (what the share watchdog reads), and one
// metrics sample (the readings the agent's metrics listener serves). It changes no GPU
// setting: the one event set it makes is freed before it returns.
func Probe(ctx context.Context, lib gonvml.Interface) ProbeReport {
	var r ProbeReport
	if v, ret := lib.SystemGetDriverVersion(); ret == gonvml.SUCCESS {
		r.DriverVersion = v
	}
	n, ret := lib.DeviceGetCount()
	if ret != gonvml.SUCCESS {
		r.Errors = append(r.Errors, CallError{Call: "DeviceGetCount", Code: gonvml.ErrorString(ret)})
		return r
	}
	es, ret := lib.EventSetCreate()
	r.EventSet = gonvml.ErrorString(ret)
	if ret == gonvml.SUCCESS {
		defer es.Free()
	}
	for i := range n {
		h, ret := lib.DeviceGetHandleByIndex(i)
		if ret != gonvml.SUCCESS {
			r.GPUs = append(r.GPUs, ProbeGPU{Index: i, Error: "DeviceGetHandleByIndex: " + gonvml.ErrorString(ret)})
			continue
		}
		g := ProbeGPU{Index: i}
		g.UUID, _ = h.GetUUID()
		if mask, ret := h.GetSupportedEventTypes(); ret == gonvml.SUCCESS {
			g.SupportedEvents = eventNames(mask)
		} else {
			g.SupportedEventsError = gonvml.ErrorString(ret)
		}
		if es != nil {
			g.Register = gonvml.ErrorString(h.RegisterEvents(watchedEvents, es))
		}
		g.Processes, g.ProcessesError = probeProcesses(h)
		if a, ok := recoveryAction(h); ok {
			g.RecoveryAction = recoveryActionName(a)
		} else {
			g.RecoveryAction = "unsupported"
		}
		r.GPUs = append(r.GPUs, g)
	}
	r.Samples, r.SampleErrors = samplerOf(lib)(ctx)
	return r
}

// probeProcesses lists a GPU's processes as the share watchdog reads them
// (processesOf), or says which call failed.
func probeProcesses(h gonvml.Device) ([]ProbeProcess, string) {
	var why string
	procs, read := processesOf(h, func(call string, ret gonvml.Return) bool {
		if ret == gonvml.SUCCESS {
			return false
		}
		why = cmp.Or(why, call+": "+gonvml.ErrorString(ret))
		return true
	})
	if !read {
		return nil, why
	}
	out := make([]ProbeProcess, 0, len(procs))
	for _, p := range procs {
		pp := ProbeProcess{PID: p.PID}
		if p.UsedKnown {
			pp.UsedMiB = &p.UsedMiB
		}
		out = append(out, pp)
	}
	return out, ""
}

// recoveryActionName names NVML's recovery actions as docs/gpus.md does.
func recoveryActionName(a gonvml.DeviceGpuRecoveryAction) string {
	switch a {
	case gonvml.GPU_RECOVERY_ACTION_NONE:
		return "none"
	case gonvml.GPU_RECOVERY_ACTION_GPU_RESET:
		return "gpu_reset"
	case gonvml.GPU_RECOVERY_ACTION_NODE_REBOOT:
		return "node_reboot"
	case gonvml.GPU_RECOVERY_ACTION_DRAIN_P2P:
		return "drain_p2p"
	case gonvml.GPU_RECOVERY_ACTION_DRAIN_AND_RESET:
		return "drain_and_reset"
	}
	return "unknown"
}

// eventNames lists the event types in mask that the health watcher cares
// about or that say what the driver can report.
func eventNames(mask uint64) []string {
	known := []struct {
		bit  uint64
		name string
	}{
		{gonvml.EventTypeSingleBitEccError, "ecc_single_bit"},
		{gonvml.EventTypeDoubleBitEccError, "ecc_double_bit"},
		{gonvml.EventTypePState, "pstate"},
		{gonvml.EventTypeXidCriticalError, "xid_critical"},
		{gonvml.EventTypeClock, "clock"},
		{gonvml.EventTypePowerSourceChange, "power_source"},
		{gonvml.EventMigConfigChange, "mig_config"},
	}
	names := []string{}
	for _, k := range known {
		if mask&k.bit != 0 {
			names = append(names, k.name)
		}
	}
	return names
}
