package translate

import (
	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// DevicesFromAPI reads the devices an agent reported.
func DevicesFromAPI(in []api.Device) []command.Device {
	return convertEach(in, func(d api.Device) command.Device {
		return command.Device{
			Index:             d.Index,
			UUID:              d.UUID,
			Name:              d.Name,
			MemoryMiB:         d.MemoryMiB,
			DriverVersion:     d.DriverVersion,
			CUDAVersion:       d.CUDAVersion,
			ComputeCapability: d.ComputeCapability,
			PCIDevice:         d.PCIDevice,
			Healthy:           d.Healthy,
			Health:            d.Health,
			HealthReason:      d.HealthReason,
			PendingApproval:   d.PendingApproval,
			MIGEnabled:        d.MIGEnabled,
			Parent:            d.Parent, // the older name was read into it at the edge (httpapi: readDeviceWords)
			MIGProfile:        d.MIGProfile,
			Sharing:           d.Sharing,
			Cordoned:          d.Cordoned,
			CordonReason:      d.CordonReason,
			MIGRequest:        d.MIGRequest,
			MIGError:          d.MIGError,
			NUMANode:          cloneInt(d.NUMANode),
			Links:             convertEach(d.Links, func(l api.DeviceLink) command.DeviceLink { return command.DeviceLink(l) }),
		}
	})
}

// DevicesToAPI renders a worker's devices.
func DevicesToAPI(in []command.Device) []api.Device {
	return convertEach(in, func(d command.Device) api.Device {
		return api.Device{
			Index:             d.Index,
			UUID:              d.UUID,
			Name:              d.Name,
			MemoryMiB:         d.MemoryMiB,
			DriverVersion:     d.DriverVersion,
			CUDAVersion:       d.CUDAVersion,
			ComputeCapability: d.ComputeCapability,
			PCIDevice:         d.PCIDevice,
			Healthy:           d.Healthy,
			Health:            d.Health,
			HealthReason:      d.HealthReason,
			PendingApproval:   d.PendingApproval,
			MIGEnabled:        d.MIGEnabled,
			Parent:            d.Parent,
			MIGProfile:        d.MIGProfile,
			Sharing:           d.Sharing,
			Cordoned:          d.Cordoned,
			CordonReason:      d.CordonReason,
			MIGRequest:        d.MIGRequest,
			MIGError:          d.MIGError,
			NUMANode:          cloneInt(d.NUMANode),
			Links:             convertEach(d.Links, func(l command.DeviceLink) api.DeviceLink { return api.DeviceLink(l) }),
		}
	})
}

func cloneInt(p *int) *int {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
