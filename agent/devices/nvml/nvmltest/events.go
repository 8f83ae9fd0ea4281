//go:build cgo && linux

package nvmltest

import (
	"fmt"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
)

// NoInstance is the GPU and compute instance ID NVML reports in an event
// that is about a whole GPU rather than one MIG instance.
const NoInstance uint32 = 0xFFFFFFFF

// events holds the event sets of a machine and the events no set has
// registered for yet. Guarded by Machine.mu.
type events struct {
	sets      []*eventSet
	pending   []pendingEvent
	supported []uint64 // event types each device supports
}

// pendingEvent is an injected event waiting for a registration.
type pendingEvent struct {
	dev int
	ev  nvml.EventData
}

func (e *events) init(n int) {
	e.supported = make([]uint64, n)
	for i := range e.supported {
		e.supported[i] = nvml.EventTypeAll
	}
}

// eventSet is an nvml.EventSet created by EventSetCreate. Its Wait
// delivers the events the test injects for the event types devices
// registered on it.
type eventSet struct {
	mock.EventSet
	m     *Machine
	masks map[int]uint64   // registered event types by device; guarded by m.mu
	queue []nvml.EventData // delivered, not yet waited for; guarded by m.mu
	freed bool             // guarded by m.mu
	ready chan struct{}    // signalled, without blocking, when queue grows
	done  chan struct{}    // closed by Free
}

// eventSetCreate answers Interface.EventSetCreate with a new, empty set.
func (m *Machine) eventSetCreate() (nvml.EventSet, nvml.Return) {
	es := &eventSet{
		m:     m,
		masks: map[int]uint64{},
		ready: make(chan struct{}, 1),
		done:  make(chan struct{}),
	}
	m.fill(&es.EventSet, hooks{
		scope:   "EventSet",
		answers: map[string]any{"Wait": es.wait, "Free": es.free},
	})
	m.mu.Lock()
	defer m.mu.Unlock()
	m.events.sets = append(m.events.sets, es)
	return es, nvml.SUCCESS
}

// eventAnswers are device i's answers about events.
func (m *Machine) eventAnswers(i int) map[string]any {
	return map[string]any{
		"RegisterEvents": func(mask uint64, set nvml.EventSet) nvml.Return {
			return m.register(i, mask, set)
		},
		"GetSupportedEventTypes": func() (uint64, nvml.Return) {
			m.mu.Lock()
			defer m.mu.Unlock()
			return m.events.supported[i], nvml.SUCCESS
		},
	}
}

// register answers RegisterEvents on device i. As in NVML, registrations
// add up, and registering a type the device does not support (see
// SetSupportedEvents) returns nvml.ERROR_NOT_SUPPORTED. Events injected
// earlier that the set now registers for are delivered to it.
func (m *Machine) register(i int, mask uint64, set nvml.EventSet) nvml.Return {
	es, ok := set.(*eventSet)
	if !ok || es.m != m {
		return nvml.ERROR_INVALID_ARGUMENT
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if es.freed {
		return nvml.ERROR_INVALID_ARGUMENT
	}
	if mask&^m.events.supported[i] != 0 {
		return nvml.ERROR_NOT_SUPPORTED
	}
	es.masks[i] |= mask
	kept := m.events.pending[:0]
	for _, p := range m.events.pending {
		if p.dev == i && p.ev.EventType&mask != 0 {
			es.push(p.ev)
		} else {
			kept = append(kept, p)
		}
	}
	m.events.pending = kept
	return nvml.SUCCESS
}

// SetSupportedEvents sets the event types device i (or, with All, every
// device) supports, as GetSupportedEventTypes reports them. The default is
// nvml.EventTypeAll.
func (m *Machine) SetSupportedEvents(i int, mask uint64) {
	for _, j := range m.indices(i) {
		m.mu.Lock()
		m.events.supported[j] = mask
		m.mu.Unlock()
	}
}

// Registered is the union of the event types registered for device i on
// the event sets not yet freed.
func (m *Machine) Registered(i int) uint64 {
	m.checkIndex(i, false)
	m.mu.Lock()
	defer m.mu.Unlock()
	var mask uint64
	for _, es := range m.events.sets {
		if !es.freed {
			mask |= es.masks[i]
		}
	}
	return mask
}

// Inject delivers ev, whose Device must be a device of this machine, to
// every live event set that registered its type for that device. If none
// has, the event waits until a set registers for it, so a test may inject
// before the code under test has registered; an event of a type nobody
// registers is never seen.
func (m *Machine) Inject(ev nvml.EventData) {
	i := m.indexOf(ev.Device)
	if i == noDevice {
		panic(fmt.Sprintf("nvmltest: Inject: event device %v is not a device of this machine", ev.Device))
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.deliver(i, ev)
}

// InjectXid injects an Xid critical error event (EventTypeXidCriticalError
// with EventData xid, about the whole GPU) on device i, or on every device
// with All.
func (m *Machine) InjectXid(i int, xid uint64) {
	for _, j := range m.indices(i) {
		m.Inject(xidEvent(m.devs[j], xid))
	}
}

// InjectECCDoubleBit injects a double-bit ECC error event on device i, or
// on every device with All. It does not change the ECC counters; set them
// with SetECCErrors.
func (m *Machine) InjectECCDoubleBit(i int) {
	for _, j := range m.indices(i) {
		m.Inject(nvml.EventData{
			Device:            m.devs[j],
			EventType:         nvml.EventTypeDoubleBitEccError,
			GpuInstanceId:     NoInstance,
			ComputeInstanceId: NoInstance,
		})
	}
}

// deliver hands event ev about device i to the sets registered for it, or
// keeps it pending. m.mu must be held.
func (m *Machine) deliver(i int, ev nvml.EventData) {
	delivered := false
	for _, es := range m.events.sets {
		if !es.freed && es.masks[i]&ev.EventType != 0 {
			es.push(ev)
			delivered = true
		}
	}
	if !delivered {
		m.events.pending = append(m.events.pending, pendingEvent{i, ev})
	}
}

// push queues ev and wakes a waiter. es.m.mu must be held.
func (es *eventSet) push(ev nvml.EventData) {
	es.queue = append(es.queue, ev)
	es.signal()
}

// signal wakes one waiter, if one is not already due to wake.
func (es *eventSet) signal() {
	select {
	case es.ready <- struct{}{}:
	default:
	}
}

// wait answers EventSet.Wait: the oldest queued event, or, after timeoutMs
// milliseconds without one, nvml.ERROR_TIMEOUT; a timeout of 0 does not
// block. On a freed set, or when the set is freed while waiting, it
// returns nvml.ERROR_INVALID_ARGUMENT.
func (es *eventSet) wait(timeoutMs uint32) (nvml.EventData, nvml.Return) {
	var expired <-chan time.Time
	for {
		es.m.mu.Lock()
		if es.freed {
			es.m.mu.Unlock()
			return nvml.EventData{}, nvml.ERROR_INVALID_ARGUMENT
		}
		if len(es.queue) > 0 {
			ev := es.queue[0]
			es.queue = es.queue[1:]
			if len(es.queue) > 0 {
				// Another waiter may have missed the signal for this one.
				es.signal()
			}
			es.m.mu.Unlock()
			return ev, nvml.SUCCESS
		}
		es.m.mu.Unlock()
		if timeoutMs == 0 {
			return nvml.EventData{}, nvml.ERROR_TIMEOUT
		}
		if expired == nil {
			t := time.NewTimer(time.Duration(timeoutMs) * time.Millisecond)
			defer t.Stop()
			expired = t.C
		}
		select {
		case <-es.ready:
		case <-es.done:
		case <-expired:
			return nvml.EventData{}, nvml.ERROR_TIMEOUT
		}
	}
}

// free answers EventSet.Free. Events still queued on the set are dropped.
func (es *eventSet) free() nvml.Return {
	es.m.mu.Lock()
	defer es.m.mu.Unlock()
	if es.freed {
		return nvml.ERROR_INVALID_ARGUMENT
	}
	es.freed = true
	es.queue = nil
	close(es.done)
	return nvml.SUCCESS
}
