//go:build cgo && linux

package nvml

import (
	"fmt"
	"strings"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// readMIG reads the MIG devices of gpu when it is in MIG mode: gpu is
// then marked MIGEnabled (it is given out only as its MIG devices) and
// each MIG device comes back as a device of its own, with its MIG-...
// UUID, its memory, gpu as Parent, and its profile. A GPU whose MIG mode
// cannot be read (the query unsupported, as on GPUs without MIG) is
// whole. A MIG device that cannot be read is reported unhealthy, with
// the reason in problems.
//
// The profile is what NVML's MIG device name ends with ("NVIDIA
// A100-SXM4-40GB MIG 1g.5gb"), else it is made from the device's GPU
// instance profile ("<slices>g.<GiB>gb").
func readMIG(lib gonvml.Interface, gpu *api.Device) ([]api.Device, []error) {
	h, ret := lib.DeviceGetHandleByIndex(gpu.Index)
	if ret != gonvml.SUCCESS {
		return nil, nil
	}
	mode, _, ret := h.GetMigMode()
	if ret != gonvml.SUCCESS || mode != gonvml.DEVICE_MIG_ENABLE {
		return nil, nil
	}
	gpu.MIGEnabled = true
	n, ret := h.GetMaxMigDeviceCount()
	if ret != gonvml.SUCCESS {
		return nil, []error{fmt.Errorf("%w: gpu %d: MIG device count: %s", ErrDeviceUnhealthy, gpu.Index, describe(ret))}
	}
	var devs []api.Device
	var problems []error
	for j := range n {
		mh, ret := h.GetMigDeviceHandleByIndex(j)
		if ret == gonvml.ERROR_NOT_FOUND {
			continue // an empty slot
		}
		d := api.Device{Index: gpu.Index, Parent: gpu.UUID, DriverVersion: gpu.DriverVersion, CUDAVersion: gpu.CUDAVersion, ComputeCapability: gpu.ComputeCapability}
		if ret != gonvml.SUCCESS || mh == nil {
			problems = append(problems, fmt.Errorf("%w: gpu %d: MIG device %d: %w", ErrDeviceUnhealthy, gpu.Index, j, queryError("handle", ret)))
			continue // no UUID to report it under
		}
		if err := readMIGDevice(h, mh, &d); err != nil {
			problems = append(problems, fmt.Errorf("%w: gpu %d: MIG device %d: %w", ErrDeviceUnhealthy, gpu.Index, j, err))
			if d.UUID == "" {
				continue
			}
		}
		devs = append(devs, d)
	}
	return devs, problems
}

// readMIGDevice reads one MIG device into d; it is healthy only when its
// UUID, memory and profile could be read.
func readMIGDevice(gpu, mh gonvml.Device, d *api.Device) error {
	uuid, ret := mh.GetUUID()
	if ret != gonvml.SUCCESS || uuid == "" {
		return queryError("uuid", ret)
	}
	d.UUID = uuid
	name, _ := mh.GetName()
	d.Name = name
	mem, ret := mh.GetMemoryInfo()
	if ret != gonvml.SUCCESS || mem.Total == 0 {
		return queryError("memory", ret)
	}
	d.MemoryMiB = mem.Total / (1 << 20)
	if _, profile, ok := strings.Cut(name, " MIG "); ok && profile != "" {
		d.MIGProfile = strings.TrimSpace(profile)
	} else if p, err := profileOf(gpu, mh); err == nil {
		d.MIGProfile = p
	} else {
		return err
	}
	if d.Name == "" {
		d.Name = "MIG " + d.MIGProfile
	}
	d.Healthy = true
	return nil
}

// profileOf makes a MIG device's profile name from its GPU instance's
// profile: its slice count and memory, rounded up to whole GiB, as
// NVIDIA names them ("1g.10gb").
func profileOf(gpu, mh gonvml.Device) (string, error) {
	id, ret := mh.GetGpuInstanceId()
	if ret != gonvml.SUCCESS {
		return "", queryError("GPU instance id", ret)
	}
	gi, ret := gpu.GetGpuInstanceById(id)
	if ret != gonvml.SUCCESS || gi == nil {
		return "", queryError("GPU instance", ret)
	}
	info, ret := gi.GetInfo()
	if ret != gonvml.SUCCESS {
		return "", queryError("GPU instance info", ret)
	}
	p, ret := gpu.GetGpuInstanceProfileInfo(int(info.ProfileId))
	if ret != gonvml.SUCCESS {
		return "", queryError("GPU instance profile", ret)
	}
	return profileName(p), nil
}

// profileName is NVIDIA's name of a GPU instance profile: its slices and
// its memory rounded up to whole GiB, "+me" for the media-extension
// variants ("1g.10gb+me").
func profileName(p gonvml.GpuInstanceProfileInfo) string {
	name := fmt.Sprintf("%dg.%dgb", p.SliceCount, (p.MemorySizeMB+1023)/1024)
	if p.Id == gonvml.GPU_INSTANCE_PROFILE_1_SLICE_REV1 || p.Id == gonvml.GPU_INSTANCE_PROFILE_2_SLICE_REV1 {
		name += "+me"
	}
	return name
}
