package httpapi

import (
	"fmt"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// validateSharingResources checks a job's GPU sharing terms: a known
// mode, a share of memory above 0 and within bounds, of exactly one whole
// GPU (not a MIG device), and no gang (a gang's members are placed whole,
// on whole GPUs). See docs/gpus.md, "Fractional sharing".
func validateSharingResources(s *api.JobSpec) error {
	r := s.Resources
	if r == nil || r.GPUSharing == "" {
		return nil
	}
	switch {
	case !api.ValidGPUSharing(r.GPUSharing):
		return invalidf("resources.gpu_sharing %s must be %q or %q (or absent: the GPUs are the task's alone)", shortQuote(r.GPUSharing), api.SharingEnforced, api.SharingUnenforced)
	case r.GPUs != 1:
		return invalidf("resources.gpu_sharing needs resources.gpus of 1: a task shares one GPU")
	case r.GPUMemoryMiB == 0:
		return invalidf("resources.gpu_sharing needs resources.gpu_memory_mib: the task's share of the GPU's memory")
	case r.GPUMemoryMiB > api.MaxGPUShareMiB:
		return invalidf("resources.gpu_memory_mib %d is above %d MiB", r.GPUMemoryMiB, api.MaxGPUShareMiB)
	case r.MIGProfile != "":
		return invalidf("resources.gpu_sharing shares whole GPUs; a MIG device (resources.mig_profile) is not shared")
	case s.Gang:
		return invalidf("resources.gpu_sharing is not for a gang job: a gang is placed on whole GPUs")
	}
	return nil
}

// validateDeviceSharing checks the sharing mechanism of a device report:
// a known one, on a whole GPU not in MIG mode.
func validateDeviceSharing(devs []api.Device) error {
	for i, d := range devs {
		field := fmt.Sprintf("devices[%d].sharing", i)
		switch {
		case d.Sharing == "":
		case !api.ValidDeviceSharing(d.Sharing): // two known words: no length to bound
			return invalidf("%s %s is not %q (or absent: the agent cannot enforce a share)", field, shortQuote(d.Sharing), api.DeviceSharingMPS)
		case d.MIGEnabled || d.Parent != "":
			return invalidf("%s: a GPU in MIG mode and a MIG device are never shared", field)
		}
	}
	return nil
}
