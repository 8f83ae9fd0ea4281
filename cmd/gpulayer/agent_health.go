package main

import (
	"time"

	"github.com/spf13/pflag"

	"github.com/gpulayer/gpulayer/agent/devices/health"
	"github.com/gpulayer/gpulayer/agent/devices/nvml"
)

// healthFlags are the agent's GPU health knobs: the hold-down window and
// the thresholds of the polled inputs (docs/gpus.md, "Health").
type healthFlags struct {
	holdDown         time.Duration
	uncorrectedECC   int64
	correctedECC     int64
	retiredPages     int64
	stuckUtilization uint32
	stuckWindow      time.Duration
}

func (f *healthFlags) register(fs *pflag.FlagSet) {
	fs.DurationVar(&f.holdDown, "health-hold-down", 10*time.Minute, "how long a GPU back from a fault stays recovering, and a degraded GPU whose condition went away stays degraded, before it is healthy again")
	fs.Int64Var(&f.uncorrectedECC, "health-ecc-uncorrected-max", 0, "new uncorrected ECC errors allowed between two health polls; more make the GPU unhealthy")
	fs.Int64Var(&f.correctedECC, "health-ecc-corrected-max", nvml.DefaultCorrectedECC, "new corrected ECC errors allowed between two health polls; more make the GPU degraded")
	fs.Int64Var(&f.retiredPages, "health-retired-pages-max", nvml.DefaultRetiredPages, "retired memory pages (double-bit and repeated single-bit ECC) at which a GPU is unhealthy until an admin clears it (0: any)")
	fs.Uint32Var(&f.stuckUtilization, "health-stuck-utilization", nvml.DefaultStuckUtilization, "a GPU busy at this percent or more for --health-stuck-window with no process on it is degraded as stuck")
	fs.DurationVar(&f.stuckWindow, "health-stuck-window", nvml.DefaultStuckWindow, "see --health-stuck-utilization")
}

func (f *healthFlags) policy() health.Policy { return health.Policy{HoldDown: f.holdDown} }

func (f *healthFlags) thresholds() nvml.Thresholds {
	return nvml.Thresholds{
		UncorrectedECC:   f.uncorrectedECC,
		CorrectedECC:     none(f.correctedECC),
		RetiredPages:     none(f.retiredPages),
		StuckUtilization: f.stuckUtilization,
		StuckWindow:      f.stuckWindow,
	}
}

// none turns a flag's 0 into the thresholds' "none allowed" (a negative
// count: their zero takes the default).
func none(n int64) int64 {
	if n == 0 {
		return -1
	}
	return n
}
