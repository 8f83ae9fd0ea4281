package heartbeat

import (
	"cmp"
	"slices"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state"
)

// A heartbeat repeats the worker's inventory (executors and devices) every
// few seconds. Only a change is written through Raft; the order a worker
// lists them in is not a change (devices carry their own index).

// sameExecutors reports whether two executor lists hold the same names.
func sameExecutors(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	if slices.Equal(a, b) {
		return true
	}
	x, y := slices.Clone(a), slices.Clone(b)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(x, y)
}

// sameDevices reports whether two device lists describe the same devices.
func sameDevices(a, b []command.Device) bool {
	if len(a) != len(b) {
		return false
	}
	if slices.EqualFunc(a, b, command.Device.Equal) {
		return true
	}
	byUUID := func(p, q command.Device) int { return cmp.Compare(p.UUID, q.UUID) }
	x, y := slices.Clone(a), slices.Clone(b)
	slices.SortFunc(x, byUUID)
	slices.SortFunc(y, byUUID)
	return slices.EqualFunc(x, y, command.Device.Equal)
}

// inventoryChanged reports whether a beat's lists (nil: not sent) differ
// from the stored worker record.
func inventoryChanged(b Beat, wk *state.Worker) bool {
	return (b.Executors != nil && !sameExecutors(b.Executors, wk.Executors)) ||
		(b.Devices != nil && !sameDevices(b.Devices, wk.Devices)) ||
		(b.MaxTasks > 0 && b.MaxTasks != wk.MaxTasks)
}
