package fit

import (
	"slices"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
)

// MostCenti is the most one task of spec can hold, in hundredths of a
// GPU: a whole GPU for each device it asks for (a gang's for its every
// member).
func MostCenti(spec command.JobSpec) int64 {
	r := spec.Resources
	switch {
	case r == nil || r.GPUs == 0:
		return 0
	case spec.Gang:
		return int64(spec.Count*r.GPUs) * command.CentiGPUsPerGPU
	}
	return int64(r.GPUs) * command.CentiGPUsPerGPU
}

// WholeCenti is what a task of spec (a gang: the whole gang) needs in
// whole GPUs, in hundredths; a share or MIG task counts its least, 1.
func WholeCenti(spec command.JobSpec) int64 {
	if r := spec.Resources; r != nil && r.GPUs > 0 && r.Partial() {
		return 1
	}
	return MostCenti(spec)
}

// TaskCenti is what a task holds on worker w in hundredths of a GPU:
// a whole GPU counts 100; a MIG instance or a memory share its fraction
// of its GPU's memory, rounded up.
func TaskCenti(w *record.Worker, devices []string, r *command.Resources) int64 {
	var sum int64
	for _, uuid := range devices {
		_, c := deviceCenti(w, uuid, r)
		sum += c
	}
	return sum
}

// deviceCenti is one device's part of a task, in hundredths of a GPU,
// and the model of its GPU (a MIG device's parent's).
func deviceCenti(w *record.Worker, uuid string, r *command.Resources) (model string, centi int64) {
	d, ok := DeviceOf(w, uuid)
	switch {
	case !ok:
		return "", command.CentiGPUsPerGPU // gone from the report since: count it whole
	case r.Shared():
		return d.Name, fractionCenti(r.GPUMemoryMiB, d.MemoryMiB)
	case d.Parent != "":
		parent, ok := DeviceOf(w, d.Parent)
		if !ok {
			return d.Name, command.CentiGPUsPerGPU
		}
		return parent.Name, fractionCenti(d.MemoryMiB, parent.MemoryMiB)
	}
	return d.Name, command.CentiGPUsPerGPU
}

// DeviceOf is the device uuid of w's report, if it is there.
func DeviceOf(w *record.Worker, uuid string) (command.Device, bool) {
	for _, d := range w.Devices {
		if d.UUID == uuid {
			return d, true
		}
	}
	return command.Device{}, false
}

// fractionCenti is part/whole in hundredths, rounded up, at most 100; a
// GPU whose memory is not known counts whole.
func fractionCenti(part, whole uint64) int64 {
	if whole == 0 || part >= whole {
		return command.CentiGPUsPerGPU
	}
	return int64((part*command.CentiGPUsPerGPU + whole - 1) / whole)
}

// Meter is what devs of worker w hold, per model, for a task with
// resources r: a whole GPU 100, a MIG device or share its memory's
// fraction of its GPU, rounded up.
func Meter(w *record.Worker, devs []string, r *command.Resources) []record.MeterShare {
	var out []record.MeterShare
	for _, uuid := range devs {
		model, centi := deviceCenti(w, uuid, r)
		if i := slices.IndexFunc(out, func(m record.MeterShare) bool { return m.Model == model }); i >= 0 {
			out[i].Centi += centi
			continue
		}
		out = append(out, record.MeterShare{Model: model, Centi: centi})
	}
	return out
}
