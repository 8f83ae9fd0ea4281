package view

import "github.com/gpulayer/gpulayer/sdk/api"

// A worker's GPUs are offered only while the worker may take work: a
// record never shows a GPU healthy that is not offered (PROTOCOL.md,
// "Devices"). The GPUs of a worker that is offline, revoked, draining or
// stopping show their health as unknown (nothing reports it now, or no
// new task goes there), and those of a worker that awaits approval as
// awaiting approval too; either way the reason says why, then what the
// agent last said. notOfferedNotHealthy holds the rule for every other
// reason a GPU is not offered.

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
	case api.WorkerDraining, api.WorkerStopping:
		why = "worker " + workerID + " is " + status + ": it takes no new task (gpulayer worker resume " + workerID + " undoes it)"
	default:
		return
	}
	for i := range devices {
		d := &devices[i]
		d.Healthy, d.HealthReason = false, why+"; "+lastReported(*d, !d.PendingApproval)
		if status == api.WorkerPending {
			d.PendingApproval = true
		} else {
			d.Health = api.HealthUnknown
		}
	}
}

// notOfferedNotHealthy marks, in place, any device that is not offered
// (healthy false: a GPU awaiting approval, one whose model did not
// verify) and still reads healthy or degraded: its health is unknown, and
// the reason keeps what the agent last reported.
func notOfferedNotHealthy(devices []api.Device) {
	for i := range devices {
		d := &devices[i]
		if d.Healthy || (d.Health != api.HealthHealthy && d.Health != api.HealthDegraded) {
			continue
		}
		reason := "not offered"
		if d.HealthReason != "" {
			reason = d.HealthReason
		}
		d.Health, d.HealthReason = api.HealthUnknown, reason+"; "+lastReported(*d, false)
	}
}
