//go:build cgo && linux

package nvmltest

import (
	"slices"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// RemappedRows is what GetRemappedRows reports: rows remapped for
// correctable and uncorrectable errors, whether a remapping is pending (it
// takes effect at the next GPU reset), and whether a remapping failed.
type RemappedRows struct {
	Correctable, Uncorrectable int
	Pending, Failure           bool
}

// eccKey names one ECC counter.
type eccKey struct {
	errType nvml.MemoryErrorType
	counter nvml.EccCounterType
}

// ecc is what one device's ECC and memory-retirement queries answer; nil
// means not set. Guarded by Machine.mu.
type ecc struct {
	counters       map[eccKey]uint64
	retired        map[nvml.PageRetirementCause][]uint64
	retiredPending *bool
	remapped       *RemappedRows
}

// SetECCErrors sets the ECC error counter GetTotalEccErrors(errType,
// counter) reports for device i (or, with All, every device), for example
// nvml.MEMORY_ERROR_TYPE_UNCORRECTED and nvml.VOLATILE_ECC. Counters not
// set are unconfigured.
func (m *Machine) SetECCErrors(i int, errType nvml.MemoryErrorType, counter nvml.EccCounterType, count uint64) {
	for _, j := range m.indices(i) {
		m.mu.Lock()
		e := &m.metrics[j].ecc
		if e.counters == nil {
			e.counters = map[eccKey]uint64{}
		}
		e.counters[eccKey{errType, counter}] = count
		m.mu.Unlock()
	}
}

// SetRetiredPages sets the addresses of the pages retired for cause that
// GetRetiredPages and GetRetiredPages_v2 (with zero timestamps) report for
// device i (or, with All, every device). Page retirement predates row
// remapping: real A100 and later GPUs answer nvml.ERROR_NOT_SUPPORTED, as
// the fixture does until this is called.
func (m *Machine) SetRetiredPages(i int, cause nvml.PageRetirementCause, addresses ...uint64) {
	for _, j := range m.indices(i) {
		m.mu.Lock()
		e := &m.metrics[j].ecc
		if e.retired == nil {
			e.retired = map[nvml.PageRetirementCause][]uint64{}
		}
		e.retired[cause] = slices.Clone(addresses)
		m.mu.Unlock()
	}
}

// SetRetiredPagesPending sets whether GetRetiredPagesPendingStatus reports
// pages waiting for a reset to be retired, on device i (or, with All,
// every device).
func (m *Machine) SetRetiredPagesPending(i int, pending bool) {
	for _, j := range m.indices(i) {
		m.mu.Lock()
		m.metrics[j].ecc.retiredPending = &pending
		m.mu.Unlock()
	}
}

// SetRemappedRows sets what GetRemappedRows reports for device i (or, with
// All, every device).
func (m *Machine) SetRemappedRows(i int, rows RemappedRows) {
	for _, j := range m.indices(i) {
		m.mu.Lock()
		m.metrics[j].ecc.remapped = &rows
		m.mu.Unlock()
	}
}

// eccAnswers are device i's answers about ECC errors and retired memory.
func (m *Machine) eccAnswers(i int) map[string]any {
	return map[string]any{
		"GetTotalEccErrors": func(errType nvml.MemoryErrorType, counter nvml.EccCounterType) (uint64, nvml.Return) {
			m.mu.Lock()
			defer m.mu.Unlock()
			if n, ok := m.metrics[i].ecc.counters[eccKey{errType, counter}]; ok {
				return n, nvml.SUCCESS
			}
			return 0, unconfigured
		},
		"GetRetiredPages": func(cause nvml.PageRetirementCause) ([]uint64, nvml.Return) {
			m.mu.Lock()
			defer m.mu.Unlock()
			if pages, ok := m.metrics[i].ecc.retired[cause]; ok {
				return slices.Clone(pages), nvml.SUCCESS
			}
			return nil, unconfigured
		},
		"GetRetiredPages_v2": func(cause nvml.PageRetirementCause) ([]uint64, []uint64, nvml.Return) {
			m.mu.Lock()
			defer m.mu.Unlock()
			if pages, ok := m.metrics[i].ecc.retired[cause]; ok {
				return slices.Clone(pages), make([]uint64, len(pages)), nvml.SUCCESS
			}
			return nil, nil, unconfigured
		},
		"GetRetiredPagesPendingStatus": func() (nvml.EnableState, nvml.Return) {
			m.mu.Lock()
			defer m.mu.Unlock()
			switch p := m.metrics[i].ecc.retiredPending; {
			case p == nil:
				return 0, unconfigured
			case *p:
				return nvml.FEATURE_ENABLED, nvml.SUCCESS
			}
			return nvml.FEATURE_DISABLED, nvml.SUCCESS
		},
		"GetRemappedRows": func() (int, int, bool, bool, nvml.Return) {
			m.mu.Lock()
			defer m.mu.Unlock()
			if r := m.metrics[i].ecc.remapped; r != nil {
				return r.Correctable, r.Uncorrectable, r.Pending, r.Failure, nvml.SUCCESS
			}
			return 0, 0, false, false, unconfigured
		},
	}
}
