//go:build cgo && linux

package nvmltest

import (
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// The A100 mock's GPU and compute instances answer as NVML does: nothing
// without MIG mode, no two instances on the same slices, no more of a
// profile than it allows, no compute instance past its GPU instance, no
// destroying what is in use, no MIG mode off while instances are left;
// each compute instance is a MIG device of its GPU.
func TestMIGInstancesKeepNVMLsRules(t *testing.T) {
	m := New(DGXA100, StableUUIDs())
	d := m.Device(2)
	want := func(what string, got, want nvml.Return) {
		t.Helper()
		if got != want {
			t.Errorf("%s: %v, want %v", what, got, want)
		}
	}
	_, ret := d.GetGpuInstanceProfileInfo(nvml.GPU_INSTANCE_PROFILE_3_SLICE)
	want("profile info with MIG mode off", ret, nvml.ERROR_NOT_SUPPORTED)
	_, ret = d.CreateGpuInstance(&nvml.GpuInstanceProfileInfo{Id: nvml.GPU_INSTANCE_PROFILE_3_SLICE})
	want("a GPU instance with MIG mode off", ret, nvml.ERROR_NOT_SUPPORTED)
	_, ret = d.SetMigMode(nvml.DEVICE_MIG_ENABLE)
	want("MIG mode on", ret, nvml.SUCCESS)

	p3, ret := d.GetGpuInstanceProfileInfo(nvml.GPU_INSTANCE_PROFILE_3_SLICE)
	want("3g profile", ret, nvml.SUCCESS)
	p4, _ := d.GetGpuInstanceProfileInfo(nvml.GPU_INSTANCE_PROFILE_4_SLICE)
	_, ret = d.CreateGpuInstanceWithPlacement(&p3, &nvml.GpuInstancePlacement{Start: 1, Size: 4})
	want("a placement the profile lacks", ret, nvml.ERROR_INVALID_ARGUMENT)
	gi, ret := d.CreateGpuInstance(&p3)
	want("the first 3g", ret, nvml.SUCCESS)
	_, ret = d.CreateGpuInstanceWithPlacement(&p4, &nvml.GpuInstancePlacement{Start: 0, Size: 4})
	want("a 4g on the 3g's slices", ret, nvml.ERROR_INSUFFICIENT_RESOURCES)
	gi2, ret := d.CreateGpuInstance(&p3)
	want("the second 3g", ret, nvml.SUCCESS)
	_, ret = d.CreateGpuInstance(&p3)
	want("a third 3g", ret, nvml.ERROR_INSUFFICIENT_RESOURCES)

	ciWhole, ret := gi.GetComputeInstanceProfileInfo(nvml.COMPUTE_INSTANCE_PROFILE_3_SLICE, nvml.COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED)
	want("3c profile", ret, nvml.SUCCESS)
	ci, ret := gi.CreateComputeInstance(&ciWhole)
	want("a compute instance spanning the 3g", ret, nvml.SUCCESS)
	ci1, _ := gi.GetComputeInstanceProfileInfo(nvml.COMPUTE_INSTANCE_PROFILE_1_SLICE, nvml.COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED)
	_, ret = gi.CreateComputeInstance(&ci1)
	want("a compute instance past the 3g's slices", ret, nvml.ERROR_INSUFFICIENT_RESOURCES)

	n, ret := d.GetMaxMigDeviceCount()
	want("MIG device count", ret, nvml.SUCCESS)
	mig, ret := d.GetMigDeviceHandleByIndex(0)
	want("the MIG device", ret, nvml.SUCCESS)
	if name, _ := mig.GetName(); name != "Mock NVIDIA A100-SXM4-40GB MIG 3g.20gb" || n != 7 {
		t.Errorf("MIG device %q of %d", name, n)
	}
	if again, _ := d.GetMigDeviceHandleByIndex(0); again != mig {
		t.Error("the MIG device's handle changed between calls")
	}
	_, ret = d.GetMigDeviceHandleByIndex(1)
	want("a GPU instance without a compute instance", ret, nvml.ERROR_NOT_FOUND)

	want("destroying a GPU instance in use", gi.Destroy(), nvml.ERROR_IN_USE)
	_, ret = d.SetMigMode(nvml.DEVICE_MIG_DISABLE)
	want("MIG mode off with instances left", ret, nvml.ERROR_IN_USE)
	want("destroying the compute instance", ci.Destroy(), nvml.SUCCESS)
	want("destroying the GPU instance", gi.Destroy(), nvml.SUCCESS)
	want("destroying the other", gi2.Destroy(), nvml.SUCCESS)
	_, ret = d.SetMigMode(nvml.DEVICE_MIG_DISABLE)
	want("MIG mode off", ret, nvml.SUCCESS)
	_, ret = d.GetMigDeviceHandleByIndex(0)
	want("a MIG device with MIG mode off", ret, nvml.ERROR_NOT_SUPPORTED)
}
