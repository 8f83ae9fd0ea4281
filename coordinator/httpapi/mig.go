package httpapi

import (
	"fmt"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// validateMIGResources checks a job's MIG terms: a profile of NVIDIA's
// form, asked for with gpus (the number of MIG devices).
func validateMIGResources(r *api.Resources) error {
	if r == nil || r.MIGProfile == "" {
		return nil
	}
	switch {
	case !api.ValidMIGProfile(r.MIGProfile):
		return invalidf("resources.mig_profile %s is not a MIG profile (like 1g.10gb, 3g.40gb or 1c.3g.40gb)", shortQuote(r.MIGProfile))
	case r.GPUs < 1:
		return invalidf("resources.mig_profile needs resources.gpus of 1 or more: the number of MIG devices")
	}
	return nil
}

// validateMIGDevices checks the MIG fields of a device report: a MIG
// device names its GPU, reported in the same list in MIG mode, and its
// profile; a GPU in MIG mode is not itself a MIG device.
func validateMIGDevices(devs []api.Device) error {
	migParent := make(map[string]bool, len(devs))
	for _, d := range devs {
		if d.MIGEnabled {
			migParent[d.UUID] = true
		}
	}
	for i, d := range devs {
		field := fmt.Sprintf("devices[%d]", i)
		if err := checkLen(field+".parent_uuid", d.Parent, api.MaxDeviceUUIDBytes); err != nil {
			return err
		}
		if err := checkLen(field+".mig_profile", d.MIGProfile, api.MaxMIGProfileBytes); err != nil {
			return err
		}
		switch {
		case d.Parent == "" && d.MIGProfile == "":
		case d.MIGEnabled:
			return invalidf("%s: a GPU in MIG mode is not itself a MIG device (parent_uuid, mig_profile)", field)
		case d.Parent == "" || d.MIGProfile == "":
			return invalidf("%s: a MIG device needs both parent_uuid and mig_profile", field)
		case !migParent[d.Parent]:
			return invalidf("%s.parent_uuid: %s is not a GPU in MIG mode in this report", field, shortQuote(d.Parent))
		case !api.ValidMIGProfile(d.MIGProfile):
			return invalidf("%s.mig_profile %s is not a MIG profile", field, shortQuote(d.MIGProfile))
		case len(d.Links) > 0:
			return invalidf("%s.links: a MIG device has no links of its own (its GPU has)", field)
		}
	}
	return nil
}
