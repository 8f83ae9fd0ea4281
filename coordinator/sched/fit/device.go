package fit

import (
	"strings"

	"github.com/gpulayer/gpulayer/coordinator/command"
)

// DeviceFits reports whether d meets r's memory, model and compute
// capability terms (its health and use aside).
func DeviceFits(d command.Device, r *command.Resources) bool {
	switch {
	case d.MIGEnabled:
		return false // a GPU in MIG mode is given out as its MIG devices only
	case r.MIGProfile != d.MIGProfile:
		return false // a MIG device for its profile only, a whole GPU for no profile
	case r.GPUMemoryMiB > 0 && d.MemoryMiB < r.GPUMemoryMiB:
		return false
	case r.GPUModel != "" && !strings.Contains(strings.ToLower(d.Name), strings.ToLower(r.GPUModel)):
		return false
	case r.ComputeCapability != "" && d.ComputeCapability != "" && compareCapability(d.ComputeCapability, r.ComputeCapability) < 0:
		return false
	}
	return true
}

// ShareFits reports whether d can take r's share beside the used MiB
// other shares hold of it (its health and whole use aside). DeviceFits
// keeps shares off GPUs in MIG mode and MIG devices: a share asks for no
// MIG profile, and every MIG device reports one.
func ShareFits(d command.Device, r *command.Resources, used uint64) bool {
	if !DeviceFits(d, r) || (r.GPUSharing == command.SharingEnforced && d.Sharing == "") {
		return false
	}
	return used+r.GPUMemoryMiB <= d.MemoryMiB
}
