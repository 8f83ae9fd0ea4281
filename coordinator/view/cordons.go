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
		last := d.Health
		if last == "" {
			last = api.HealthUnhealthy
			if d.Healthy {
				last = api.HealthHealthy
			}
		}
		why := "cordoned by an admin"
		if reason != "" {
			why += ": " + reason
		}
		why += "; last reported " + last
		if d.HealthReason != "" {
			why += ": " + d.HealthReason
		}
		d.Cordoned, d.CordonReason = true, reason
		d.Healthy, d.Health, d.HealthReason = false, api.HealthUnknown, why
	}
}
