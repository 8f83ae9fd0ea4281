package fit

import (
	"cmp"
	"slices"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
)

// Approved reports whether d is as w's approved inventory has it: its
// memory (Worker.ApprovedDevices) and its identity (Identity). A worker
// from state written before approvals were kept approves what it reports.
func Approved(w *record.Worker, d command.Device) bool {
	if w.ApprovedDevices == nil {
		return true
	}
	mib, ok := w.ApprovedDevices[d.UUID]
	return ok && mib == d.MemoryMiB && sameIdentity(w, d) // identity.go
}

// Offered reports whether d, a device of w, may be given work: healthy,
// approved, not cordoned and not awaiting a MIG layout.
func Offered(w *record.Worker, d command.Device) bool {
	return d.Healthy && Approved(w, d) && !Cordoned(w, d) && !MIGHeld(w, d)
}

// Inventory is the approved form of a device list.
func Inventory(devs []command.Device) map[string]uint64 {
	m := make(map[string]uint64, len(devs))
	for _, d := range devs {
		m[d.UUID] = d.MemoryMiB
	}
	return m
}

// Cordoned reports whether d, or the GPU a MIG device d is part of, is
// cordoned: an admin keeps new work off it (state/gpuops's Cordon).
func Cordoned(w *record.Worker, d command.Device) bool {
	if _, ok := w.Cordons[d.UUID]; ok {
		return true
	}
	_, ok := w.Cordons[d.Parent]
	return ok && d.Parent != ""
}

// MIGLayoutOf is the request for GPU uuid of w, if any.
func MIGLayoutOf(w *record.Worker, uuid string) (record.MIGLayout, bool) {
	i := slices.IndexFunc(w.MIGLayouts, func(m record.MIGLayout) bool { return m.UUID == uuid })
	if i < 0 {
		return record.MIGLayout{}, false
	}
	return w.MIGLayouts[i], true
}

// MIGHeld reports whether d, or the GPU a MIG device d is part of, awaits
// a MIG layout or failed to take one.
func MIGHeld(w *record.Worker, d command.Device) bool {
	if len(w.MIGLayouts) == 0 {
		return false
	}
	m, ok := MIGLayoutOf(w, cmp.Or(d.Parent, d.UUID))
	return ok && m.State != record.MIGApplied
}
