//go:build cgo && linux

package nvml

import (
	"slices"
	"testing"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gpulayer/gpulayer/agent/devices/nvml/nvmltest"
)

// Probe reports, per GPU, what the watcher can rely on: a GPU that
// supports the fault events registers them, one that supports none says
// so, a driver without the recovery-action field reads "unsupported", and
// the metrics sample carries what the GPU reads. The event set it made is
// freed: nothing stays registered.
func TestProbeReportsWhatEachGPUSupports(t *testing.T) {
	m := nvmltest.New("dgxh100", nvmltest.StableUUIDs())
	m.SetSupportedEvents(1, uint64(gonvml.EventTypeClock))
	m.SetUtilization(0, 42, 7)
	m.SetTemperature(0, 51)
	m.SetProcesses(0, gonvml.ProcessInfo{Pid: 4242, UsedGpuMemory: 3 << 30}, gonvml.ProcessInfo{Pid: 4343, UsedGpuMemory: ^uint64(0)})

	r := Probe(t.Context(), m.Interface())

	if r.EventSet != "SUCCESS" || len(r.GPUs) != 8 || len(r.Errors) != 0 {
		t.Fatalf("report = %+v", r)
	}
	g0, g1 := r.GPUs[0], r.GPUs[1]
	if g0.UUID != nvmltest.StableUUID(0) || g0.Register != "SUCCESS" ||
		!slices.Contains(g0.SupportedEvents, "xid_critical") || !slices.Contains(g0.SupportedEvents, "ecc_double_bit") {
		t.Errorf("GPU 0 = %+v", g0)
	}
	if g1.Register != gonvml.ErrorString(gonvml.ERROR_NOT_SUPPORTED) || !slices.Equal(g1.SupportedEvents, []string{"clock"}) {
		t.Errorf("GPU 1 = %+v", g1)
	}
	// NVML's "not available" (all ones) is no memory figure at all.
	if len(g0.Processes) != 2 || g0.ProcessesError != "" ||
		g0.Processes[0].PID != 4242 || g0.Processes[0].UsedMiB == nil || *g0.Processes[0].UsedMiB != 3072 ||
		g0.Processes[1].PID != 4343 || g0.Processes[1].UsedMiB != nil {
		t.Errorf("GPU 0 processes = %+v (%s)", g0.Processes, g0.ProcessesError)
	}
	if g1.Processes != nil || g1.ProcessesError != "GetComputeRunningProcesses: "+gonvml.ErrorString(gonvml.ERROR_NOT_SUPPORTED) {
		t.Errorf("GPU 1, whose process list is not configured: %+v (%q)", g1.Processes, g1.ProcessesError)
	}
	if g0.RecoveryAction != "unsupported" {
		t.Errorf("recovery action on a driver without the field = %q", g0.RecoveryAction)
	}
	if len(r.Samples) != 8 || r.Samples[0].GPUUtil == nil || *r.Samples[0].GPUUtil != 42 ||
		r.Samples[0].TempC == nil || *r.Samples[0].TempC != 51 {
		t.Errorf("samples = %+v", r.Samples)
	}
	for i := range 8 {
		if got := m.Registered(i); got != 0 {
			t.Errorf("GPU %d still has events %#x registered after the probe", i, got)
		}
	}
}

// A GPU lost during the probe is reported with the error, not skipped
// silently, and the others are still probed.
func TestProbeReportsALostGPU(t *testing.T) {
	m := nvmltest.New("dgxh100", nvmltest.StableUUIDs())
	m.InjectGPULost(3)
	r := Probe(t.Context(), m.Interface())
	if len(r.GPUs) != 8 {
		t.Fatalf("report = %+v", r)
	}
	lost := gonvml.ErrorString(gonvml.ERROR_GPU_IS_LOST)
	if g := r.GPUs[3]; g.Error != "DeviceGetHandleByIndex: "+lost || g.Register != "" {
		t.Errorf("lost GPU = %+v", g)
	}
	if r.GPUs[2].Register != "SUCCESS" || r.GPUs[4].Register != "SUCCESS" {
		t.Errorf("GPUs 2 and 4 = %+v, %+v", r.GPUs[2], r.GPUs[4])
	}
	if len(r.SampleErrors) != 1 || r.SampleErrors[0].Code != lost {
		t.Errorf("sample errors = %+v", r.SampleErrors)
	}
}

func TestRecoveryActionNames(t *testing.T) {
	for a, want := range map[gonvml.DeviceGpuRecoveryAction]string{
		gonvml.GPU_RECOVERY_ACTION_NONE:            "none",
		gonvml.GPU_RECOVERY_ACTION_GPU_RESET:       "gpu_reset",
		gonvml.GPU_RECOVERY_ACTION_NODE_REBOOT:     "node_reboot",
		gonvml.GPU_RECOVERY_ACTION_DRAIN_P2P:       "drain_p2p",
		gonvml.GPU_RECOVERY_ACTION_DRAIN_AND_RESET: "drain_and_reset",
		99: "unknown",
	} {
		if got := recoveryActionName(a); got != want {
			t.Errorf("%d: %q, want %q", a, got, want)
		}
	}
}
