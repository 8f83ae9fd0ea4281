//go:build cgo && linux

package nvml

import (
	"strings"
	"testing"
	"time"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gpulayer/gpulayer/agent/devices/health"
	"github.com/gpulayer/gpulayer/agent/devices/nvml/nvmltest"
)

// waitPolls waits until n more polls have reached GPU i.
func (r *healthRig) waitPolls(t *testing.T, i, n int) {
	t.Helper()
	r.mu.Lock()
	target := r.polls[r.uuids[i]] + n
	r.mu.Unlock()
	if !r.await(func() bool { return r.polls[r.uuids[i]] >= target }) {
		t.Fatalf("GPU %d was not polled %d more times", i, n)
	}
}

// clear is an operator's clear of GPU i, as the agent's health loop
// applies it.
func (r *healthRig) clear(i int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tracker.Clear(time.Now(), r.uuids[i])
}

// Each polled input on the mock DGX H100: within its threshold the GPU
// stays healthy; past it the GPU turns degraded or unhealthy with the
// input named in its reason; once the input is gone (or, for a fault, an
// operator clears it) it is healthy again after the hold-down window.
func TestWatchPolledInputs(t *testing.T) {
	const gpu = 2
	hold := 100 * time.Millisecond
	uncorrected := func(n uint64) func(m *nvmltest.Machine) {
		return func(m *nvmltest.Machine) {
			m.SetECCErrors(gpu, gonvml.MEMORY_ERROR_TYPE_UNCORRECTED, gonvml.VOLATILE_ECC, n)
		}
	}
	corrected := func(n uint64) func(m *nvmltest.Machine) {
		return func(m *nvmltest.Machine) {
			m.SetECCErrors(gpu, gonvml.MEMORY_ERROR_TYPE_CORRECTED, gonvml.VOLATILE_ECC, n)
		}
	}
	cases := []struct {
		name   string
		th     Thresholds
		setup  func(m *nvmltest.Machine) // before the watcher starts
		within func(m *nvmltest.Machine) // inside the threshold: stays healthy
		past   func(m *nvmltest.Machine)
		want   health.State
		class  health.Class // of an unhealthy GPU
		reason string
		// recover takes the input away; nil: an operator's clear.
		recover func(m *nvmltest.Machine)
	}{
		{"uncorrected ECC errors past the allowed count", Thresholds{UncorrectedECC: 2},
			uncorrected(0), uncorrected(2), uncorrected(5),
			health.Unhealthy, health.ClassResetGPU, "3 new uncorrected ECC errors", nil},
		{"corrected ECC errors past the allowed count between two polls", Thresholds{CorrectedECC: 10},
			corrected(0), corrected(10), corrected(30),
			health.Degraded, "", "ecc-corrected: more than 10 corrected ECC errors", func(*nvmltest.Machine) {}},
		{"retired pages reach the limit", Thresholds{RetiredPages: 3},
			func(m *nvmltest.Machine) {
				m.SetRetiredPages(gpu, gonvml.PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR, 0x1000)
				m.SetRetiredPages(gpu, gonvml.PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS)
			},
			func(m *nvmltest.Machine) {
				m.SetRetiredPages(gpu, gonvml.PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS, 0x2000)
			},
			func(m *nvmltest.Machine) {
				m.SetRetiredPages(gpu, gonvml.PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS, 0x2000, 0x3000)
			},
			health.Unhealthy, health.ClassReplace, "too many retired memory pages: 3 retired, 2 allowed", nil},
		{"pages waiting to be retired", Thresholds{},
			func(m *nvmltest.Machine) { m.SetRetiredPagesPending(gpu, false) }, nil,
			func(m *nvmltest.Machine) { m.SetRetiredPagesPending(gpu, true) },
			health.Degraded, "", "retire-pending: memory pages wait to be retired at the next GPU reset",
			func(m *nvmltest.Machine) { m.SetRetiredPagesPending(gpu, false) }},
		{"rows waiting to be remapped", Thresholds{},
			func(m *nvmltest.Machine) { m.SetRemappedRows(gpu, nvmltest.RemappedRows{Correctable: 1}) }, nil,
			func(m *nvmltest.Machine) {
				m.SetRemappedRows(gpu, nvmltest.RemappedRows{Correctable: 1, Pending: true})
			},
			health.Degraded, "", "retire-pending: rows wait to be remapped",
			func(m *nvmltest.Machine) { m.SetRemappedRows(gpu, nvmltest.RemappedRows{Correctable: 1}) }},
		{"clocks held down by heat (power capping alone is normal)", Thresholds{},
			func(m *nvmltest.Machine) { m.SetClocksEventReasons(gpu, 0) },
			func(m *nvmltest.Machine) { m.SetClocksEventReasons(gpu, gonvml.ClocksEventReasonSwPowerCap) },
			func(m *nvmltest.Machine) {
				m.SetClocksEventReasons(gpu, gonvml.ClocksEventReasonSwPowerCap|gonvml.ClocksThrottleReasonHwThermalSlowdown)
			},
			health.Degraded, "", "throttle: clocks held down: HW thermal slowdown",
			func(m *nvmltest.Machine) { m.SetClocksEventReasons(gpu, gonvml.ClocksEventReasonSwPowerCap) }},
		{"the power brake and SW thermal slowdown", Thresholds{},
			nil, nil,
			func(m *nvmltest.Machine) {
				m.SetClocksEventReasons(gpu, gonvml.ClocksThrottleReasonHwPowerBrakeSlowdown|gonvml.ClocksEventReasonSwThermalSlowdown|gonvml.ClocksThrottleReasonHwSlowdown)
			},
			health.Degraded, "", "HW slowdown, HW power brake, SW thermal slowdown",
			func(m *nvmltest.Machine) { m.SetClocksEventReasons(gpu, 0) }},
		{"busy with no process for the window", Thresholds{StuckUtilization: 95, StuckWindow: 60 * time.Millisecond},
			func(m *nvmltest.Machine) {
				m.SetUtilization(gpu, 99, 10)
				m.SetProcesses(gpu, gonvml.ProcessInfo{Pid: 4242, UsedGpuMemory: 1 << 30, GpuInstanceId: 0xFFFFFFFF, ComputeInstanceId: 0xFFFFFFFF})
			},
			func(m *nvmltest.Machine) {
				m.SetUtilization(gpu, 90, 10) // below the mark, with no process: an idle GPU winding down
				m.SetProcesses(gpu)
			},
			func(m *nvmltest.Machine) { m.SetUtilization(gpu, 100, 10) },
			health.Degraded, "", "stuck: busy at 95% or more for 60ms with no process on it",
			func(m *nvmltest.Machine) { m.SetUtilization(gpu, 0, 0) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := startHealthRigWith(t, c.setup, health.Policy{HoldDown: hold}, c.th)
			// Every GPU is watched (healthy) before the input changes, so
			// a neighbour still "not watched yet" is not read as having
			// caught GPU 2's input.
			for i := range r.uuids {
				r.waitState(t, i, health.Healthy, "at the start")
			}
			if c.within != nil {
				c.within(r.m)
				r.waitPolls(t, gpu, 10)
				if st := r.state(gpu); st.State != health.Healthy {
					t.Fatalf("within the threshold: %s (%s), want healthy", st.State, st.Reason())
				}
			}
			c.past(r.m)
			st := r.waitState(t, gpu, c.want, "past the threshold")
			if st.Class != c.class || !strings.Contains(st.Reason(), c.reason) {
				t.Fatalf("past the threshold: class %q, reason %q; want class %q, reason with %q", st.Class, st.Reason(), c.class, c.reason)
			}
			if failed := r.failed(r.uuids[gpu]); failed != (c.want == health.Unhealthy) {
				t.Fatalf("tasks failed %v for a %s GPU", failed, c.want)
			}
			if !st.State.Offered() && c.want == health.Degraded {
				t.Fatal("a degraded GPU is not offered")
			}
			for i := range r.uuids {
				if i != gpu && r.state(i).State != health.Healthy {
					t.Fatalf("GPU %d caught GPU %d's input: %+v", i, gpu, r.state(i))
				}
			}
			if c.recover != nil {
				c.recover(r.m)
			} else {
				r.waitPolls(t, gpu, 3) // the input stays as it is: no new fault
				r.clear(gpu)
			}
			r.waitState(t, gpu, health.Healthy, "after the input went away and the hold-down")
		})
	}
}
