//go:build cgo && linux

package nvml

import (
	"context"
	"fmt"
	"time"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gpulayer/gpulayer/agent/devices/health"
)

// watchedEvents are the NVML events the watcher registers: the fault
// events. Others (clocks, power) say nothing about health.
const watchedEvents = uint64(gonvml.EventTypeXidCriticalError | gonvml.EventTypeDoubleBitEccError)

// watcher turns NVML events and polls into health observations.
type watcher struct {
	lib  gonvml.Interface
	opts WatchOptions
	sink func(health.Observation)

	uuids []string // by index, as inventory read them
	// polled: GPUs watched by polling only (their events cannot be
	// registered); every GPU is also polled for liveness, ECC counters,
	// row remapping and the driver's recovery action.
	polled []bool
	// handles are the GPUs' handles as their events were registered, by
	// index: a lost GPU's event names its handle, which answers nothing
	// about itself any more (uuidOf).
	handles []gonvml.Device
	dbe     []uint64 // last volatile uncorrected ECC count, by index
	dbeOK   []bool
	inputs  []inputs // the other polled inputs, by index (watchinputs.go)
}

// watch runs until ctx ends. See Source.Watch.
func watch(ctx context.Context, lib gonvml.Interface, uuids []string, opts WatchOptions, sink func(health.Observation)) {
	w := &watcher{lib: lib, opts: opts.withDefaults(), sink: sink, uuids: uuids,
		polled: make([]bool, len(uuids)), dbe: make([]uint64, len(uuids)), dbeOK: make([]bool, len(uuids)),
		inputs: make([]inputs, len(uuids))}
	backoff := w.opts.Poll
	for ctx.Err() == nil {
		es, registered := w.register()
		if es != nil {
			w.loop(ctx, es, registered)
			_ = es.Free()
		} else {
			w.pollOnly(ctx)
		}
		// The event set failed: every GPU is blind until it is set up
		// again (a poll that succeeds says Watched again).
		select {
		case <-ctx.Done():
			return
		case <-w.opts.Clock.After(backoff):
		}
		backoff = min(2*backoff, w.opts.MaxBackoff)
	}
}

// register creates an event set and registers each GPU's fault events.
// A GPU whose events are not supported is polled instead; one whose
// registration fails otherwise is blind. It returns nil when no set can
// be made (every GPU is then polled).
func (w *watcher) register() (gonvml.EventSet, int) {
	es, ret := w.lib.EventSetCreate()
	if ret != gonvml.SUCCESS {
		for i := range w.uuids {
			w.polled[i] = true
		}
		w.opts.Logger.Warn("GPU events cannot be watched; polling instead", "error", describe(ret))
		return nil, 0
	}
	registered := 0
	w.handles = make([]gonvml.Device, len(w.uuids))
	for i, uuid := range w.uuids {
		d, ret := w.lib.DeviceGetHandleByIndex(i)
		if ret == gonvml.SUCCESS {
			w.handles[i] = d
			ret = d.RegisterEvents(watchedEvents, es)
		}
		switch ret {
		case gonvml.SUCCESS:
			w.polled[i] = false
			registered++
		case gonvml.ERROR_NOT_SUPPORTED:
			w.polled[i] = true
		case gonvml.ERROR_GPU_IS_LOST:
			w.sink(health.Observation{UUID: uuid, Kind: health.Lost, Detail: "registering its events: " + describe(ret)})
		default:
			w.polled[i] = true
			w.sink(health.Observation{UUID: uuid, Kind: health.Blind, Detail: "registering its events: " + describe(ret)})
		}
	}
	return es, registered
}

// loop waits for events, polling every opts.Poll, until ctx ends or the
// set fails.
func (w *watcher) loop(ctx context.Context, es gonvml.EventSet, registered int) {
	w.poll()
	next := w.opts.Clock.Now().Add(w.opts.Poll)
	for ctx.Err() == nil {
		if registered == 0 {
			w.pollOnly(ctx)
			return
		}
		ev, ret := es.Wait(uint32(w.opts.Wait / time.Millisecond))
		switch ret {
		case gonvml.SUCCESS:
			w.event(ev)
		case gonvml.ERROR_TIMEOUT:
		default:
			for i, uuid := range w.uuids {
				if !w.polled[i] {
					w.sink(health.Observation{UUID: uuid, Kind: health.Blind, Detail: "waiting for its events: " + describe(ret)})
				}
			}
			return
		}
		if now := w.opts.Clock.Now(); !now.Before(next) {
			w.poll()
			next = now.Add(w.opts.Poll)
		}
	}
}

// pollOnly polls every opts.Poll until ctx ends.
func (w *watcher) pollOnly(ctx context.Context) {
	for {
		w.poll()
		select {
		case <-ctx.Done():
			return
		case <-w.opts.Clock.After(w.opts.Poll):
		}
	}
}

// noInstance is the GPU or compute instance id of an event about the
// whole GPU.
const noInstance = 0xFFFFFFFF

// event turns one NVML event into an observation.
func (w *watcher) event(ev gonvml.EventData) {
	uuid, ok := w.uuidOf(ev.Device)
	if !ok {
		return
	}
	switch ev.EventType {
	case gonvml.EventTypeXidCriticalError:
		o := health.Observation{UUID: uuid, Kind: health.XidError, Xid: ev.EventData}
		if ev.GpuInstanceId != noInstance {
			o.Instance = migDeviceOf(ev.Device, ev.GpuInstanceId, ev.ComputeInstanceId)
		}
		w.sink(o)
	case gonvml.EventTypeDoubleBitEccError:
		w.sink(health.Observation{UUID: uuid, Kind: health.DoubleBitECC})
	}
}

// migDeviceOf names the MIG device of GPU d that is GPU instance gi (and
// compute instance ci, unless the event named none), or "" when none
// matches: the fault is then taken as the whole GPU's.
func migDeviceOf(d gonvml.Device, gi, ci uint32) string {
	n, ret := d.GetMaxMigDeviceCount()
	if ret != gonvml.SUCCESS {
		return ""
	}
	for j := range n {
		mh, ret := d.GetMigDeviceHandleByIndex(j)
		if ret != gonvml.SUCCESS || mh == nil {
			continue
		}
		if g, ret := mh.GetGpuInstanceId(); ret != gonvml.SUCCESS || uint32(g) != gi {
			continue
		}
		if ci != noInstance {
			if c, ret := mh.GetComputeInstanceId(); ret != gonvml.SUCCESS || uint32(c) != ci {
				continue
			}
		}
		if u, ret := mh.GetUUID(); ret == gonvml.SUCCESS {
			return u
		}
	}
	return ""
}

// uuidOf names the GPU of an event.
func (w *watcher) uuidOf(d gonvml.Device) (string, bool) {
	if d == nil {
		return "", false
	}
	if u, ret := d.GetUUID(); ret == gonvml.SUCCESS {
		return u, true
	}
	if i, ret := d.GetIndex(); ret == gonvml.SUCCESS && i >= 0 && i < len(w.uuids) {
		return w.uuids[i], true
	}
	// A GPU that fell off the bus answers neither: its handle is the one
	// its events were registered with (the Xid 79 of its fall comes so).
	for i, h := range w.handles {
		if sameHandle(h, d) {
			return w.uuids[i], true
		}
	}
	return "", false
}

// sameHandle reports whether a and b are one device handle; a handle of a
// type that cannot be compared is never the same.
func sameHandle(a, b gonvml.Device) (same bool) {
	defer func() {
		if recover() != nil {
			same = false
		}
	}()
	return a != nil && a == b
}

// poll checks each GPU: that it still answers by its UUID, its
// uncorrected ECC count, row remapping failures, the inputs that degrade
// it (watchinputs.go), and the recovery action the driver asks for. A GPU
// that answers is watched.
func (w *watcher) poll() {
	for i, uuid := range w.uuids {
		d, ret := w.lib.DeviceGetHandleByUUID(uuid)
		switch ret {
		case gonvml.SUCCESS:
		case gonvml.ERROR_GPU_IS_LOST, gonvml.ERROR_NOT_FOUND:
			w.sink(health.Observation{UUID: uuid, Kind: health.Lost, Detail: "looking it up by UUID: " + describe(ret)})
			continue
		default:
			w.sink(health.Observation{UUID: uuid, Kind: health.Blind, Detail: "looking it up by UUID: " + describe(ret)})
			continue
		}
		if n, ret := d.GetTotalEccErrors(gonvml.MEMORY_ERROR_TYPE_UNCORRECTED, gonvml.VOLATILE_ECC); ret == gonvml.SUCCESS {
			if w.dbeOK[i] && n > w.dbe[i] && n-w.dbe[i] > uint64(w.opts.Thresholds.UncorrectedECC) {
				w.sink(health.Observation{UUID: uuid, Kind: health.DoubleBitECC, Detail: fmt.Sprintf("%d new uncorrected ECC errors", n-w.dbe[i])})
			}
			w.dbe[i], w.dbeOK[i] = n, true
		} else if ret == gonvml.ERROR_GPU_IS_LOST {
			w.sink(health.Observation{UUID: uuid, Kind: health.Lost, Detail: "reading its ECC counters: " + describe(ret)})
			continue
		}
		_, _, remapPending, failed, ret := d.GetRemappedRows()
		if ret == gonvml.SUCCESS && failed {
			w.sink(health.Observation{UUID: uuid, Kind: health.XidError, Xid: 64, Detail: "row remapping failed"})
		}
		w.sink(health.Observation{UUID: uuid, Kind: health.Watched})
		w.pollInputs(i, uuid, d, ret == gonvml.SUCCESS && remapPending)
		if action, ok := recoveryAction(d); ok && action == gonvml.GPU_RECOVERY_ACTION_NONE {
			w.sink(health.Observation{UUID: uuid, Kind: health.NoRecoveryPending})
		}
	}
}

// recoveryAction reads the recovery action the driver asks for (NVML's
// FI_DEV_GET_GPU_RECOVERY_ACTION field), where the driver has it.
func recoveryAction(d gonvml.Device) (gonvml.DeviceGpuRecoveryAction, bool) {
	vals := []gonvml.FieldValue{{FieldId: gonvml.FI_DEV_GET_GPU_RECOVERY_ACTION}}
	if ret := d.GetFieldValues(vals); ret != gonvml.SUCCESS || gonvml.Return(vals[0].NvmlReturn) != gonvml.SUCCESS {
		return 0, false
	}
	v := vals[0].Value
	return gonvml.DeviceGpuRecoveryAction(uint32(v[0]) | uint32(v[1])<<8 | uint32(v[2])<<16 | uint32(v[3])<<24), true
}
