package view

import "github.com/gpulayer/gpulayer/sdk/api"

// cordonedDevices marks, in place, the devices an admin cordoned (a MIG
// device by its GPU's cordon): cordoned, with the reason, and, as for
// every GPU that is not offered, never healthy (PROTOCOL.md, "Devices"):
// its health reads unknown and the reason keeps what the agent last
// reported.
func cordonedDevices(cordons map[string]string, devices []api.Device) {
	if len(cordons) == 0 {
		return
	}
	for i := range devices {
		d := &devices[i]
		reason, ok := cordons[d.UUID]
		if !ok && d.Parent != "" {
			reason, ok = cordons[d.Parent]
		}
		if !ok {
			continue
		}
		why := "cordoned by an admin"
		if reason != "" {
			why += ": " + reason
		}
		why += "; " + lastReported(*d, true)
		d.Cordoned, d.CordonReason = true, reason
		d.Healthy, d.Health, d.HealthReason = false, api.HealthUnknown, why
	}
}

// lastReported says what a device's agent last said of it, for the reason
// of a device shown not offered: its health word (or, from an agent that
// does not watch health, its flag as one), and its reason when withReason.
func lastReported(d api.Device, withReason bool) string {
	last := d.Health
	if last == "" {
		last = api.HealthUnhealthy
		if d.Healthy {
			last = api.HealthHealthy
		}
	}
	out := "last reported " + last
	if withReason && d.HealthReason != "" {
		out += ": " + d.HealthReason
	}
	return out
}
