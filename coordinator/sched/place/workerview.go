package place

import (
	"cmp"
	"slices"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/sched/backfill"
	"github.com/gpulayer/gpulayer/coordinator/sched/fit"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
)

// Worker views. A match reads the same facts about a worker's devices
// again and again: which are offered (health, approval, identity, cordon,
// MIG layout), which its active tasks hold whole or by a share and until
// about when, and what is free. A WorkerView derives them once, from the
// worker's record and its active tasks alone; the store keeps each until
// what it was derived from changes (its workerview.go), so a replica
// restored from a snapshot and one that replayed the log read the same.

// Holding is one active task of a worker as placement reads it: the
// task and its job.
type Holding struct {
	Task *record.Task
	Job  *record.Job
}

// OfferedDevice is one offered device of a worker and what holds it.
type OfferedDevice struct {
	Device command.Device
	Whole  bool   // an active task holds it whole
	Shared bool   // active tasks hold shares of it
	Used   uint64 // the MiB those shares hold
	End    backfill.End
}

// busy reports whether an active task holds d, whole or by a share.
func (d OfferedDevice) busy() bool { return d.Whole || d.Shared }

// WorkerView is what one worker offers now.
type WorkerView struct {
	Offered []OfferedDevice  // the offered devices, in the worker's order
	Free    []command.Device // offered devices no active task holds
	Room    Room
	// Exclusive is whether an active task's job asks for the worker to
	// itself; PerJob counts the active tasks of each job (CanRun).
	Exclusive bool
	PerJob    map[string]int
}

// Fractional GPU sharing (docs/gpus.md, "Fractional sharing"). A task
// whose resources set gpu_sharing takes gpu_memory_mib of one whole GPU's
// memory instead of the GPU. A GPU is then either held whole, by one
// exclusive task, or shared, by tasks whose shares sum to at most its
// memory; it is never both. A GPU in MIG mode and MIG devices are never
// shared, and an "enforced" share goes only to a GPU whose agent reports
// how it enforces it (Device.Sharing).

// DeviceUse says which of w's devices its active tasks, but those in
// gone, hold whole, and how much memory (MiB) they hold of each shared
// one; holding reads one of w's active tasks.
func DeviceUse(w *record.Worker, holding func(taskID string) Holding, gone map[string]bool) (whole map[string]bool, shared map[string]uint64) {
	whole, shared = map[string]bool{}, map[string]uint64{}
	for id := range w.Held() {
		if !gone[id] {
			addUse(whole, shared, holding(id))
		}
	}
	return whole, shared
}

// addUse counts what h holds: its devices whole, or its share of each.
func addUse(whole map[string]bool, shared map[string]uint64, h Holding) {
	r := h.Job.Spec.Resources
	for _, d := range h.Task.Devices {
		if r.Shared() {
			shared[d] += r.GPUMemoryMiB
		} else {
			whole[d] = true
		}
	}
}

// NewWorkerView derives w's view from its active tasks, each read by
// holding, and when each is expected to end.
func NewWorkerView(w *record.Worker, holding func(taskID string) Holding, end func(taskID string) backfill.End) *WorkerView {
	whole, shared := map[string]bool{}, map[string]uint64{}
	var ends map[string]backfill.End
	v := &WorkerView{}
	for id := range w.Held() {
		h, e := holding(id), end(id)
		addUse(whole, shared, h)
		for _, d := range h.Task.Devices {
			if ends == nil {
				ends = map[string]backfill.End{}
			}
			// A device's end is when the last of its holders is expected
			// to end (backfill.EndOf, as the store keeps it with what each
			// task holds), unknown when any holder's is.
			if old, seen := ends[d]; !seen || !(old.Unknown || (!e.Unknown && old.At.After(e.At))) {
				ends[d] = e
			}
		}
		v.Exclusive = v.Exclusive || h.Job.Spec.ExclusiveWorker
		if v.PerJob == nil {
			v.PerJob = map[string]int{}
		}
		v.PerJob[h.Job.ID]++
	}
	for _, d := range w.Devices {
		if !fit.Offered(w, d) {
			continue
		}
		used, isShared := shared[d.UUID]
		od := OfferedDevice{Device: d, Whole: whole[d.UUID], Shared: isShared, Used: used, End: ends[d.UUID]}
		v.Offered = append(v.Offered, od)
		if !od.busy() {
			v.Free = append(v.Free, d)
		}
		if od.Whole {
			continue
		}
		switch {
		case d.MIGEnabled:
		case d.MIGProfile != "":
			v.Room.Partial = v.Room.Partial || !isShared
		case !isShared:
			v.Room.Whole++
			v.Room.Partial = true
		case used < d.MemoryMiB:
			v.Room.Partial = true
		}
	}
	return v
}

// HoldSlots is w's backfill slots for a member of j of per GPUs (slots),
// or none when w could not run j: its status, executors, capabilities,
// target or required affinity.
func HoldSlots(f Fleet, w *record.Worker, j *record.Job, per int) []backfill.Slot {
	if w.Status != record.WorkerReady || !slices.Contains(w.Executors, j.Spec.Executor) ||
		!fit.CapabilityAllows(w.Capabilities, "", j.Spec.Capability) || !satisfies(f, w, j.Spec.Target) {
		return nil
	}
	if _, broken := requiredRule(f, w, j.Rules()); broken {
		return nil
	}
	return f.WorkerView(w).slots(w, j.Spec, per)
}

// slots splits the view's devices that fit spec into members of per
// GPUs, earliest free first, as many as w's and the job's placement
// rules allow: the backfill slots of worker w.
func (v *WorkerView) slots(w *record.Worker, spec command.JobSpec, per int) []backfill.Slot {
	type dev struct {
		uuid    string
		end     backfill.End
		unknown bool
	}
	var devs []dev
	for _, d := range v.Offered {
		if fit.DeviceFits(d.Device, spec.Resources) {
			devs = append(devs, dev{uuid: d.Device.UUID, end: d.End, unknown: d.busy() && d.End.Unknown})
		}
	}
	slices.SortStableFunc(devs, func(a, b dev) int {
		return cmp.Or(backfill.CompareUnknown(a.unknown, b.unknown), a.end.At.Compare(b.end.At))
	})
	n := len(devs) / per
	if spec.ExclusiveWorker {
		n = min(n, 1)
	}
	if spec.MaxPerWorker > 0 {
		n = min(n, spec.MaxPerWorker)
	}
	if w.MaxTasks > 0 {
		n = min(n, w.MaxTasks)
	}
	out := make([]backfill.Slot, 0, n)
	for i := range n {
		sl := backfill.Slot{Worker: w.ID, Index: i}
		for _, d := range devs[i*per : (i+1)*per] {
			sl.Devices = append(sl.Devices, d.uuid)
			sl.Unknown = sl.Unknown || d.unknown
			if d.end.At.After(sl.At) {
				sl.At = d.end.At
			}
		}
		out = append(out, sl)
	}
	// A member with a device of unknown end may come before a later one
	// by its known ends; put them in the order the hold takes them.
	slices.SortStableFunc(out, backfill.Compare)
	return out
}
