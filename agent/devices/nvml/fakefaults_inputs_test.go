//go:build cgo && linux

package nvml

import (
	"errors"
	"testing"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gpulayer/gpulayer/agent/devices/nvml/nvmltest"
)

// The faults file's lines for the inputs that degrade a GPU set what the
// fake GPU answers; a line that names no known reason or state is
// refused and changes nothing.
func TestFakeFaultLinesForDegradedInputs(t *testing.T) {
	m := nvmltest.New("dgxh100", nvmltest.StableUUIDs())
	uuids := make([]string, m.Count())
	for i := range uuids {
		uuids[i], _ = m.Device(i).GetUUID()
	}
	reasons := func() uint64 {
		r, ret := m.Device(1).GetCurrentClocksEventReasons()
		if ret != gonvml.SUCCESS {
			t.Fatalf("clocks event reasons: %v", ret)
		}
		return r
	}
	pending := func() bool {
		p, ret := m.Device(1).GetRetiredPagesPendingStatus()
		if ret != gonvml.SUCCESS {
			t.Fatalf("pending retirement: %v", ret)
		}
		return p == gonvml.FEATURE_ENABLED
	}
	cases := []struct {
		line  string
		bad   bool
		check func() bool
	}{
		{uuids[1] + " throttle hw-thermal,hw-power-brake", false, func() bool {
			return reasons() == gonvml.ClocksThrottleReasonHwThermalSlowdown|gonvml.ClocksThrottleReasonHwPowerBrakeSlowdown
		}},
		{uuids[1] + " throttle too-hot", true, func() bool { // unchanged
			return reasons() == gonvml.ClocksThrottleReasonHwThermalSlowdown|gonvml.ClocksThrottleReasonHwPowerBrakeSlowdown
		}},
		{uuids[1] + " throttle none", false, func() bool { return reasons() == 0 }},
		{uuids[1] + " retire-pending on", false, pending},
		{uuids[1] + " retire-pending maybe", true, pending},
		{uuids[1] + " retire-pending off", false, func() bool { return !pending() }},
	}
	for _, c := range cases {
		err := injectFault(m, uuids, c.line)
		if (err != nil) != c.bad || (c.bad && !errors.Is(err, errBadFault)) {
			t.Fatalf("%q: %v, want refused %v", c.line, err, c.bad)
		}
		if !c.check() {
			t.Fatalf("after %q the fake GPU answers otherwise", c.line)
		}
	}
}
