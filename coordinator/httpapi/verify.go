package httpapi

import (
	"cmp"
	"slices"
	"strings"

	"github.com/gpulayer/gpulayer/internal/gpusku"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// verifyDevices checks a worker's device report against the known GPU
// models (internal/gpusku), and against the models its join token admits
// when it pins any: a device whose memory or compute capability
// contradicts its model's name, or whose model the token does not admit,
// is kept on the record but not offered (health unknown, with the
// reason), so a worker cannot be given work for GPUs it does not have. It returns the report as the coordinator keeps
// it, a copy where it changed anything.
func verifyDevices(devs []api.Device, admitted ...string) []api.Device {
	if slices.ContainsFunc(devs, func(d api.Device) bool { return d.PendingApproval }) {
		// The coordinator's word, never an agent's.
		devs = slices.Clone(devs)
		for i := range devs {
			devs[i].PendingApproval = false
		}
	}
	out := devs
	for i, d := range devs {
		if d.Parent != "" {
			continue // a MIG device: its GPU, in the same report, is checked
		}
		why := cmp.Or(gpusku.Check(d.Name, d.MemoryMiB, d.ComputeCapability), gpusku.CheckPCI(d.Name, d.PCIDevice))
		if why != "" {
			why = "the report does not match its model: " + why
		} else if len(admitted) > 0 && !slices.ContainsFunc(admitted, func(m string) bool { return strings.EqualFold(strings.TrimSpace(m), strings.TrimSpace(d.Name)) }) {
			why = "its model is not one the worker's join token admits (" + strings.Join(admitted, ", ") + ")"
		}
		if why == "" {
			continue
		}
		if &out[0] == &devs[0] {
			out = append([]api.Device(nil), devs...)
		}
		reason := "not offered: " + why
		if d.HealthReason != "" {
			reason += "; " + d.HealthReason
		}
		if len(reason) > api.MaxDeviceHealthReasonBytes {
			reason = reason[:api.MaxDeviceHealthReasonBytes]
		}
		out[i].Healthy, out[i].Health, out[i].HealthReason = false, api.HealthUnknown, reason
	}
	return withheldParents(out)
}

// withheldParents keeps the MIG devices of a GPU that is not offered out
// of service with it.
func withheldParents(devs []api.Device) []api.Device {
	withheld := map[string]string{}
	for _, d := range devs {
		if d.MIGEnabled && d.Health == api.HealthUnknown && strings.HasPrefix(d.HealthReason, "not offered: ") {
			withheld[d.UUID] = d.HealthReason
		}
	}
	if len(withheld) == 0 {
		return devs
	}
	out := slices.Clone(devs)
	for i, d := range out {
		if why, ok := withheld[d.Parent]; ok {
			why = "its GPU is " + why
			out[i].Healthy, out[i].Health, out[i].HealthReason = false, api.HealthUnknown, why[:min(len(why), api.MaxDeviceHealthReasonBytes)]
		}
	}
	return out
}
