//go:build cgo && linux

package nvml

import (
	"fmt"
	"strings"
	"time"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gpulayer/gpulayer/agent/devices/health"
)

// inputs is what the watcher remembers of one GPU's polled inputs
// between polls.
type inputs struct {
	sbe   uint64 // last volatile corrected ECC count
	sbeOK bool
	// retired is the retired page count last reported too many; a
	// count that grows past it is reported again.
	retired int
	// busySince is when the GPU was first seen busy with no process, in
	// the current stretch; zero when it is not.
	busySince time.Time
	// shown are the conditions last said present, with their reason: a
	// condition is said again only when it changes.
	shown map[string]string
}

// throttleReasons are the clocks event reasons that degrade a GPU, with
// their names. Power capping by software (SwPowerCap) and the idle,
// application and sync-boost reasons are how a working GPU runs, not a
// sign of trouble.
var throttleReasons = []struct {
	bit  uint64
	name string
}{
	{gonvml.ClocksThrottleReasonHwSlowdown, "HW slowdown"},
	{gonvml.ClocksThrottleReasonHwThermalSlowdown, "HW thermal slowdown"},
	{gonvml.ClocksThrottleReasonHwPowerBrakeSlowdown, "HW power brake"},
	{gonvml.ClocksEventReasonSwThermalSlowdown, "SW thermal slowdown"},
}

// pollInputs reads GPU i's inputs that degrade it or, for retired pages,
// take it out: corrected ECC errors, retired pages and those waiting for a
// reset (or rows waiting to be remapped: remapPending), the clocks event
// reasons, and a GPU busy with no process. An input the GPU does not
// report says nothing: its condition is taken as absent.
func (w *watcher) pollInputs(i int, uuid string, d gonvml.Device, remapPending bool) {
	th := w.opts.Thresholds
	in := &w.inputs[i]
	say := func(name string, present bool, why string) {
		if in.shown == nil {
			in.shown = map[string]string{}
		}
		last, shown := in.shown[name]
		switch {
		case present && (!shown || last != why):
			in.shown[name] = why
			w.sink(health.Observation{UUID: uuid, Kind: health.Degrade, Condition: name, Detail: why})
		case !present && shown:
			delete(in.shown, name)
			w.sink(health.Observation{UUID: uuid, Kind: health.Undegrade, Condition: name})
		}
	}

	n, ret := d.GetTotalEccErrors(gonvml.MEMORY_ERROR_TYPE_CORRECTED, gonvml.VOLATILE_ECC)
	many := ret == gonvml.SUCCESS && in.sbeOK && n > in.sbe && n-in.sbe > uint64(th.CorrectedECC)
	in.sbe, in.sbeOK = n, ret == gonvml.SUCCESS
	say(health.CondCorrectedECC, many, fmt.Sprintf("more than %d corrected ECC errors between two polls", th.CorrectedECC))

	pages, pagesOK := retiredPages(d)
	if pagesOK && int64(pages) >= th.RetiredPages && pages > in.retired {
		w.sink(health.Observation{UUID: uuid, Kind: health.TooManyRetiredPages, Detail: fmt.Sprintf("%d retired, %d allowed", pages, th.RetiredPages-1)})
		in.retired = pages
	}
	pending, ret := d.GetRetiredPagesPendingStatus()
	pagesPending := ret == gonvml.SUCCESS && pending == gonvml.FEATURE_ENABLED
	var waiting []string
	if pagesPending {
		waiting = append(waiting, "memory pages wait to be retired")
	}
	if remapPending {
		waiting = append(waiting, "rows wait to be remapped")
	}
	say(health.CondRetirePending, len(waiting) > 0, strings.Join(waiting, " and ")+" at the next GPU reset")

	reasons, ret := d.GetCurrentClocksEventReasons()
	var slow []string
	for _, r := range throttleReasons {
		if ret == gonvml.SUCCESS && reasons&r.bit != 0 {
			slow = append(slow, r.name)
		}
	}
	say(health.CondThrottle, len(slow) > 0, "clocks held down: "+strings.Join(slow, ", "))

	now := w.opts.Clock.Now()
	if !busyWithNoProcess(d, th.StuckUtilization) {
		in.busySince = time.Time{}
	} else if in.busySince.IsZero() {
		in.busySince = now
	}
	stuck := !in.busySince.IsZero() && now.Sub(in.busySince) >= th.StuckWindow
	say(health.CondStuck, stuck, fmt.Sprintf("busy at %d%% or more for %s with no process on it", th.StuckUtilization, th.StuckWindow))
}

// retiredPages counts the GPU's retired pages, for both causes; ok is
// false when the GPU does not retire pages (it remaps rows instead).
func retiredPages(d gonvml.Device) (n int, ok bool) {
	for _, cause := range []gonvml.PageRetirementCause{gonvml.PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR, gonvml.PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS} {
		pages, ret := d.GetRetiredPages(cause)
		if ret == gonvml.SUCCESS {
			n += len(pages)
			ok = true
		}
	}
	return n, ok
}

// busyWithNoProcess reports whether the GPU is busy at least at percent
// while NVML lists no compute process on it; false whenever either is not
// known.
func busyWithNoProcess(d gonvml.Device, percent uint32) bool {
	u, ret := d.GetUtilizationRates()
	if ret != gonvml.SUCCESS || u.Gpu < percent {
		return false
	}
	procs, ret := d.GetComputeRunningProcesses()
	return ret == gonvml.SUCCESS && len(procs) == 0
}
