package view

import "github.com/gpulayer/gpulayer/sdk/api"

// A worker's GPUs are offered only while the worker may take work: a
// record never shows a GPU healthy that is not offered (PROTOCOL.md,
// "Devices"). The GPUs of a worker that is offline or revoked show their
// health as unknown (nothing reports it now, and nothing runs there), and
// those of a worker that awaits approval as awaiting approval too; either
// way the reason says why, then what the agent last said.

// idleDevices marks, in place, the devices of a worker whose status
// keeps them from being offered.
func idleDevices(workerID, status string, devices []api.Device) {
	var why string
	switch status {
	case api.WorkerOffline:
		why = "worker " + workerID + " is offline: nothing reports this GPU's health now"
	case api.WorkerRevoked:
		why = "worker " + workerID + " is revoked: its GPUs are out of the fleet (gpulayer worker forget " + workerID + " removes it)"
	case api.WorkerPending:
		why = "worker " + workerID + " awaits approval (gpulayer worker approve " + workerID + ")"
	default:
		return
	}
	for i := range devices {
		d := &devices[i]
		last := d.Health
		if last == "" {
			last = api.HealthUnhealthy
			if d.Healthy {
				last = api.HealthHealthy
			}
		}
		reason := why + "; last reported " + last
		if d.HealthReason != "" && !d.PendingApproval {
			reason += ": " + d.HealthReason
		}
		d.Healthy, d.HealthReason = false, reason
		if status == api.WorkerPending {
			d.PendingApproval = true
		} else {
			d.Health = api.HealthUnknown
		}
	}
}
