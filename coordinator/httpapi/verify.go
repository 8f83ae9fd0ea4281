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
// reason), so a worker cannot be given work for GPUs it does not have. It
// returns a copy of the report as the coordinator keeps it.
func verifyDevices(devs []api.Device, admitted ...string) []api.Device {
	out := slices.Clone(devs)
	withheld := map[string]string{} // a GPU not offered: why
	for i := range out {
		d := &out[i]
		d.PendingApproval = false // the coordinator's word, never an agent's
		d.Cordoned, d.CordonReason = false, ""
		if d.Parent != "" {
			continue // a MIG device: its GPU, in the same report, is checked
		}
		why := cmp.Or(gpusku.Check(d.Name, d.MemoryMiB, d.ComputeCapability), gpusku.CheckPCI(d.Name, d.PCIDevice))
		if why != "" {
			why = "the report does not match its model: " + why
		} else if len(admitted) > 0 && !slices.ContainsFunc(admitted, func(m string) bool { return strings.EqualFold(strings.TrimSpace(m), strings.TrimSpace(d.Name)) }) {
			why = "its model is not one the worker's join token admits (" + strings.Join(admitted, ", ") + ")"
		}
		if why != "" {
			withhold(d, "not offered: "+why)
			withheld[d.UUID] = d.HealthReason
		}
	}
	// The MIG devices of a GPU not offered are held back with it.
	for i := range out {
		if why, ok := withheld[out[i].Parent]; ok {
			withhold(&out[i], "its GPU is "+why)
		}
	}
	return out
}

// withhold keeps d on the record but not offered, for reason (and what
// the agent said of it), within the health reason's bound.
func withhold(d *api.Device, reason string) {
	if d.HealthReason != "" {
		reason += "; " + d.HealthReason
	}
	d.Healthy, d.Health, d.HealthReason = false, api.HealthUnknown, reason[:min(len(reason), api.MaxDeviceHealthReasonBytes)]
}
