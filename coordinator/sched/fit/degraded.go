package fit

import "github.com/gpulayer/gpulayer/coordinator/command"

// Degraded devices. An agent reports a GPU that works but has a
// condition (clocks held down, many corrected memory errors, memory
// waiting to be retired, busy with no process) as degraded: it is offered,
// but a worker's healthy devices are chosen before it, so that a degraded
// GPU runs work only when no healthy one of the worker fits
// (docs/protocol.md, "Devices"). Which worker takes a task is not changed
// by it: the order is within one worker's devices.

// HealthDegraded is the health word of a GPU that works but has a
// condition.
const HealthDegraded = "degraded"

// Degraded reports whether d was reported degraded.
func Degraded(d command.Device) bool { return d.Health == HealthDegraded }

// CompareDegraded orders healthy before degraded.
func CompareDegraded(a, b bool) int {
	switch {
	case a == b:
		return 0
	case b:
		return -1
	}
	return 1
}

// HealthyFirst narrows devs, the devices that fit a task wanting k, to
// those not degraded when there are k of them; otherwise it is devs with
// the degraded ones last, in their order.
func HealthyFirst(devs []command.Device, k int) []command.Device {
	var good, bad []command.Device
	for _, d := range devs {
		if Degraded(d) {
			bad = append(bad, d)
		} else {
			good = append(good, d)
		}
	}
	if len(good) >= k || len(bad) == 0 {
		return good[:len(good):len(good)]
	}
	return append(good, bad...)
}
