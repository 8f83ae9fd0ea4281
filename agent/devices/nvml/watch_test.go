//go:build cgo && linux

package nvml

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gpulayer/gpulayer/agent/devices/health"
	"github.com/gpulayer/gpulayer/agent/devices/nvml/nvmltest"
)

// healthRig runs Watch on a mock machine into a health tracker, as the
// agent does.
type healthRig struct {
	m     *nvmltest.Machine
	uuids []string

	mu      sync.Mutex
	tracker *health.Tracker
	effects []health.Effect
	polls   map[string]int // polls that reached each GPU (Watched observations)
	// changed is closed, and replaced, at every observation the watcher
	// hands over: what await waits on.
	changed chan struct{}
	cancel  context.CancelFunc
	done    chan struct{}
}

func startHealthRig(t *testing.T, setup func(m *nvmltest.Machine)) *healthRig {
	t.Helper()
	return startHealthRigWith(t, setup, health.Policy{}, Thresholds{})
}

// startHealthRigWith is startHealthRig with a tracker policy and the
// watcher's thresholds; the tracker's time advances (Tick) at every
// observation.
func startHealthRigWith(t *testing.T, setup func(m *nvmltest.Machine), policy health.Policy, th Thresholds) *healthRig {
	t.Helper()
	m := nvmltest.New("dgxh100", nvmltest.StableUUIDs())
	if setup != nil {
		setup(m)
	}
	src, err := OpenInterface(t.Context(), nil, m.Interface())
	if err != nil {
		t.Fatal(err)
	}
	devs, err := src.Devices(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	r := &healthRig{m: m, done: make(chan struct{}), changed: make(chan struct{}), polls: map[string]int{}}
	for _, d := range devs {
		if d.Parent == "" { // as the agent does: a MIG device's health is its GPU's
			r.uuids = append(r.uuids, d.UUID)
		}
	}
	r.tracker = health.New(policy, time.Now(), "boot", r.uuids, nil)
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() {
		defer close(r.done)
		src.Watch(ctx, r.uuids, WatchOptions{Poll: 20 * time.Millisecond, Wait: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond, Thresholds: th}, func(o health.Observation) {
			r.mu.Lock()
			defer r.mu.Unlock()
			if eff := r.tracker.Observe(time.Now(), o); len(eff.FailTasks) > 0 {
				r.effects = append(r.effects, eff)
			}
			r.tracker.Tick(time.Now())
			if o.Kind == health.Watched {
				r.polls[o.UUID]++
			}
			close(r.changed)
			r.changed = make(chan struct{})
		})
	}()
	t.Cleanup(func() {
		cancel()
		<-r.done
		_ = src.Close()
	})
	return r
}

func (r *healthRig) state(i int) health.Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.tracker.Status(r.uuids[i])
}

// await waits, for at most 10 s, until cond holds; cond runs under the
// rig's lock and is asked again after each observation. It reports
// whether cond held.
func (r *healthRig) await(cond func() bool) bool {
	timeout := time.After(10 * time.Second)
	for {
		r.mu.Lock()
		ok, changed := cond(), r.changed
		r.mu.Unlock()
		if ok {
			return true
		}
		select {
		case <-changed:
		case <-timeout:
			return false
		}
	}
}

func (r *healthRig) waitState(t *testing.T, i int, want health.State, what string) health.Status {
	t.Helper()
	if !r.await(func() bool { return r.tracker.Status(r.uuids[i]).State == want }) {
		st := r.state(i)
		t.Fatalf("%s: GPU %d is %s (%s), want %s", what, i, st.State, st.Reason(), want)
	}
	return r.state(i)
}

// waitFailed waits until the tasks on uuid have been failed.
func (r *healthRig) waitFailed(t *testing.T, uuid string) {
	t.Helper()
	if !r.await(func() bool { return r.failedLocked(uuid) }) {
		t.Fatalf("the tasks on %s were not failed", uuid)
	}
}

func (r *healthRig) failed(uuid string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failedLocked(uuid)
}

func (r *healthRig) failedLocked(uuid string) bool {
	for _, e := range r.effects {
		for _, u := range e.FailTasks {
			if u == uuid {
				return true
			}
		}
	}
	return false
}

// Every GPU is watched once its events are registered and its first poll
// answers; then events and polls drive its state.
func TestWatchEventsAndPolls(t *testing.T) {
	cases := []struct {
		name   string
		setup  func(m *nvmltest.Machine)
		inject func(m *nvmltest.Machine)
		want   health.State
		class  health.Class
		fails  bool
	}{
		{"an application XID fails the task and leaves the GPU healthy", nil,
			func(m *nvmltest.Machine) { m.InjectXid(2, 13) }, health.Healthy, "", true},
		{"XID 48 takes the GPU out", nil,
			func(m *nvmltest.Machine) { m.InjectXid(2, 48) }, health.Unhealthy, health.ClassResetGPU, true},
		{"a double-bit ECC event takes the GPU out", nil,
			func(m *nvmltest.Machine) { m.InjectECCDoubleBit(2) }, health.Unhealthy, health.ClassResetGPU, true},
		{"a GPU fallen off the bus is lost", nil,
			func(m *nvmltest.Machine) { m.InjectGPULost(2) }, health.Unhealthy, health.ClassGPULost, true},
		{"events not supported: a growing ECC counter is seen by polling",
			func(m *nvmltest.Machine) {
				m.SetSupportedEvents(2, 0)
				m.Fail(2, "RegisterEvents", gonvml.ERROR_NOT_SUPPORTED, nvmltest.Always)
				m.SetECCErrors(2, gonvml.MEMORY_ERROR_TYPE_UNCORRECTED, gonvml.VOLATILE_ECC, 0)
			},
			func(m *nvmltest.Machine) {
				m.SetECCErrors(2, gonvml.MEMORY_ERROR_TYPE_UNCORRECTED, gonvml.VOLATILE_ECC, 3)
			}, health.Unhealthy, health.ClassResetGPU, true},
		{"events not supported: a lost GPU is seen by polling",
			func(m *nvmltest.Machine) {
				m.Fail(2, "RegisterEvents", gonvml.ERROR_NOT_SUPPORTED, nvmltest.Always)
			},
			func(m *nvmltest.Machine) {
				m.Fail(2, "DeviceGetHandleByUUID", gonvml.ERROR_GPU_IS_LOST, nvmltest.Always)
			},
			health.Unhealthy, health.ClassGPULost, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := startHealthRig(t, c.setup)
			for i := range r.uuids {
				r.waitState(t, i, health.Healthy, "before the fault")
			}
			c.inject(r.m)
			if c.want == health.Healthy {
				r.waitFailed(t, r.uuids[2])
			}
			st := r.waitState(t, 2, c.want, "after the fault")
			if st.Class != c.class || r.failed(r.uuids[2]) != c.fails {
				t.Fatalf("GPU 2: %+v, tasks failed %v; want class %q, failed %v", st, r.failed(r.uuids[2]), c.class, c.fails)
			}
			for i := range r.uuids {
				if i != 2 && r.state(i).State != health.Healthy {
					t.Fatalf("GPU %d caught GPU 2's fault: %+v", i, r.state(i))
				}
			}
		})
	}
}

// On a GPU in MIG mode an XID event names the GPU instance that faulted:
// an application XID there fails the tasks on that MIG device only, and a
// GPU-class XID from an instance still takes the whole GPU out.
func TestWatchMIGInstanceEvents(t *testing.T) {
	migs := []nvmltest.MIGDevice{
		{UUID: "MIG-aaaaaaaa-0000-4000-8000-000000000001", Profile: "3g.40gb", MemoryMiB: 40192, GPUInstance: 1, ComputeInstance: 0},
		{UUID: "MIG-aaaaaaaa-0000-4000-8000-000000000002", Profile: "3g.40gb", MemoryMiB: 40192, GPUInstance: 2, ComputeInstance: 0},
	}
	event := func(m *nvmltest.Machine, xid uint64, gi uint32) {
		m.Inject(gonvml.EventData{Device: m.Device(2), EventType: gonvml.EventTypeXidCriticalError, EventData: xid, GpuInstanceId: gi, ComputeInstanceId: 0})
	}
	t.Run("application XID in instance 2", func(t *testing.T) {
		r := startHealthRig(t, func(m *nvmltest.Machine) { m.SetMIGDevices(2, migs...) })
		r.waitState(t, 2, health.Healthy, "before the fault")
		event(r.m, 13, 2)
		r.waitFailed(t, migs[1].UUID)
		if r.failed(r.uuids[2]) || r.failed(migs[0].UUID) {
			t.Fatal("an application fault in one instance failed more than that instance's tasks")
		}
		if st := r.state(2); st.State != health.Healthy {
			t.Fatalf("GPU 2 after an application fault in an instance: %+v", st)
		}
	})
	t.Run("GPU-class XID from instance 1", func(t *testing.T) {
		r := startHealthRig(t, func(m *nvmltest.Machine) { m.SetMIGDevices(2, migs...) })
		r.waitState(t, 2, health.Healthy, "before the fault")
		event(r.m, 48, 1)
		r.waitFailed(t, r.uuids[2])
		if st := r.waitState(t, 2, health.Unhealthy, "after the fault"); st.Class != health.ClassResetGPU {
			t.Fatalf("GPU 2: %+v", st)
		}
	})
}

// Failing closed: no event set, a registration that fails, or a UUID
// lookup that fails leaves the GPUs unknown, never assumed healthy.
func TestWatchFailsClosed(t *testing.T) {
	cases := []struct {
		name  string
		setup func(m *nvmltest.Machine)
		gpu   int
	}{
		{"registration refused and no poll answers", func(m *nvmltest.Machine) {
			m.Fail(3, "RegisterEvents", gonvml.ERROR_UNKNOWN, nvmltest.Always)
			m.Fail(3, "DeviceGetHandleByUUID", gonvml.ERROR_UNKNOWN, nvmltest.Always)
		}, 3},
		{"no event set and no poll answers", func(m *nvmltest.Machine) {
			m.FailCall("EventSetCreate", gonvml.ERROR_UNKNOWN)
			m.Fail(1, "DeviceGetHandleByUUID", gonvml.ERROR_UNKNOWN, nvmltest.Always)
		}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := startHealthRig(t, c.setup)
			for i := range r.uuids {
				if i != c.gpu {
					r.waitState(t, i, health.Healthy, "a GPU that answers")
				}
			}
			blind := func() bool { return strings.Contains(r.tracker.Status(r.uuids[c.gpu]).Reason(), "cannot be watched") }
			if !r.await(blind) {
				t.Fatalf("GPU %d: %+v, want unknown because its health cannot be watched", c.gpu, r.state(c.gpu))
			}
			if st := r.state(c.gpu); st.State != health.Unknown {
				t.Fatalf("GPU %d: %+v, want unknown because its health cannot be watched", c.gpu, st)
			}
		})
	}
}

// A GPU that falls off the bus answers nothing about itself, not even
// its UUID or index: the Xid 79 of its fall is still its own, named by
// the handle its events were registered with, and reaches the tracker at
// once rather than at the next poll.
func TestLostGPUsEventIsNamed(t *testing.T) {
	m := nvmltest.New("dgxh100", nvmltest.StableUUIDs())
	lib := m.Interface()
	if ret := lib.Init(); ret != gonvml.SUCCESS {
		t.Fatalf("init: %v", ret)
	}
	uuids := make([]string, m.Count())
	for i := range uuids {
		uuids[i], _ = m.Device(i).GetUUID()
	}
	w := &watcher{lib: lib, opts: WatchOptions{}.withDefaults(), sink: func(health.Observation) {}, uuids: uuids, polled: make([]bool, len(uuids))}
	es, registered := w.register()
	if es == nil || registered != len(uuids) {
		t.Fatalf("registered %d of %d GPUs", registered, len(uuids))
	}
	m.InjectGPULost(2)
	ev, ret := es.Wait(1000)
	if ret != gonvml.SUCCESS {
		t.Fatalf("no event: %v", ret)
	}
	if _, ret := ev.Device.GetUUID(); ret == gonvml.SUCCESS {
		t.Fatal("the lost GPU still answers its UUID: the test shows nothing")
	}
	if u, ok := w.uuidOf(ev.Device); !ok || u != uuids[2] {
		t.Fatalf("the lost GPU's event names %q (%v), want %s", u, ok, uuids[2])
	}
}
