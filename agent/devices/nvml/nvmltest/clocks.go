//go:build cgo && linux

package nvmltest

import "github.com/NVIDIA/go-nvml/pkg/nvml"

// SetClocksEventReasons sets the reasons, a mask of nvml.ClocksEventReason*
// and nvml.ClocksThrottleReason* bits, that GetCurrentClocksEventReasons
// (and its deprecated name GetCurrentClocksThrottleReasons) reports for
// device i (or, with All, every device): why the clocks run below their
// maximum. Until it is called the query is unconfigured.
func (m *Machine) SetClocksEventReasons(i int, reasons uint64) {
	for _, j := range m.indices(i) {
		m.mu.Lock()
		m.metrics[j].clocksEvents = &reasons
		m.mu.Unlock()
	}
}

// clockAnswers are device i's answers about its clocks.
func (m *Machine) clockAnswers(i int) map[string]any {
	reasons := func() (uint64, nvml.Return) {
		m.mu.Lock()
		defer m.mu.Unlock()
		if r := m.metrics[i].clocksEvents; r != nil {
			return *r, nvml.SUCCESS
		}
		return 0, unconfigured
	}
	return map[string]any{
		"GetCurrentClocksEventReasons":    reasons,
		"GetCurrentClocksThrottleReasons": reasons,
	}
}
