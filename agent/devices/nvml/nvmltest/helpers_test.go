//go:build cgo && linux

package nvmltest

import (
	"fmt"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// handle looks device i up through lib, as agent code does.
func handle(t *testing.T, lib nvml.Interface, i int) nvml.Device {
	t.Helper()
	d, ret := lib.DeviceGetHandleByIndex(i)
	if ret != nvml.SUCCESS {
		t.Fatalf("DeviceGetHandleByIndex(%d) = %v", i, ret)
	}
	return d
}

// registeredSet creates an event set through lib and registers mask on every
// device for it.
func registeredSet(t *testing.T, lib nvml.Interface, mask uint64) nvml.EventSet {
	t.Helper()
	set, ret := lib.EventSetCreate()
	if ret != nvml.SUCCESS {
		t.Fatalf("EventSetCreate = %v", ret)
	}
	n, _ := lib.DeviceGetCount()
	for i := range n {
		if ret := lib.DeviceRegisterEvents(handle(t, lib, i), mask, set); ret != nvml.SUCCESS {
			t.Fatalf("DeviceRegisterEvents(%d) = %v", i, ret)
		}
	}
	return set
}

// migInstances enables MIG on device 0 and creates one 1-slice GPU
// instance with one 1-slice compute instance in it.
func migInstances(t *testing.T, lib nvml.Interface) (nvml.GpuInstance, nvml.ComputeInstance) {
	t.Helper()
	d := handle(t, lib, 0)
	if _, ret := d.SetMigMode(nvml.DEVICE_MIG_ENABLE); ret != nvml.SUCCESS {
		t.Fatalf("SetMigMode = %v", ret)
	}
	gip, ret := d.GetGpuInstanceProfileInfo(nvml.GPU_INSTANCE_PROFILE_1_SLICE)
	if ret != nvml.SUCCESS {
		t.Fatalf("GetGpuInstanceProfileInfo = %v", ret)
	}
	gi, ret := d.CreateGpuInstance(&gip)
	if ret != nvml.SUCCESS {
		t.Fatalf("CreateGpuInstance = %v", ret)
	}
	cip, ret := gi.GetComputeInstanceProfileInfo(nvml.COMPUTE_INSTANCE_PROFILE_1_SLICE, nvml.COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED)
	if ret != nvml.SUCCESS {
		t.Fatalf("GetComputeInstanceProfileInfo = %v", ret)
	}
	ci, ret := gi.CreateComputeInstance(&cip)
	if ret != nvml.SUCCESS {
		t.Fatalf("CreateComputeInstance = %v", ret)
	}
	return gi, ci
}

// panicMessage runs f and returns what it panicked with, or "" if it did
// not panic.
func panicMessage(f func()) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			msg = fmt.Sprint(r)
		}
	}()
	f()
	return ""
}
