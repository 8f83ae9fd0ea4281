package nvml

import (
	"log/slog"
	"time"

	"github.com/gpulayer/gpulayer/internal/clock"
)

// WatchOptions tune Source.Watch. The zero value is usable.
type WatchOptions struct {
	// Poll is how often every GPU is polled (liveness by UUID, ECC
	// counters, row remapping, the driver's recovery action), besides the
	// events (default 10 s). A GPU whose events cannot be registered is
	// watched by polling alone.
	Poll time.Duration
	// Wait bounds one wait for events, so that the watcher notices the end
	// of its context (default 1 s).
	Wait time.Duration
	// MaxBackoff caps the pause before an event set that failed is set up
	// again (default 1 min).
	MaxBackoff time.Duration
	// Thresholds bound the polled health inputs (ECC counters, retired
	// pages, a stuck GPU).
	Thresholds Thresholds
	Clock      clock.Clock
	Logger     *slog.Logger
}

// Thresholds say when a polled health input makes a GPU degraded or
// unhealthy (docs/gpus.md, "Health"). The zero value takes the defaults;
// a negative count means none is allowed where a count is asked.
type Thresholds struct {
	// UncorrectedECC: more new uncorrected (volatile) ECC errors than
	// this between two polls make the GPU unhealthy (default 0: any).
	UncorrectedECC int64
	// CorrectedECC: more new corrected (volatile) ECC errors than this
	// between two polls make the GPU degraded (default 1000).
	CorrectedECC int64
	// RetiredPages: this many retired memory pages or more (for either
	// cause: double-bit, or repeated single-bit ECC errors) make the GPU
	// unhealthy until an operator clears it (default 60).
	RetiredPages int64
	// StuckUtilization and StuckWindow: a GPU busy at this percent or more
	// for the window, with no compute process on it, is degraded as stuck
	// (defaults 95 and 5 min).
	StuckUtilization uint32
	StuckWindow      time.Duration
}

// Default thresholds.
const (
	DefaultCorrectedECC     = 1000
	DefaultRetiredPages     = 60
	DefaultStuckUtilization = 95
	DefaultStuckWindow      = 5 * time.Minute
)

func (t Thresholds) withDefaults() Thresholds {
	t.UncorrectedECC = max(t.UncorrectedECC, 0)
	if t.CorrectedECC == 0 {
		t.CorrectedECC = DefaultCorrectedECC
	} else if t.CorrectedECC < 0 {
		t.CorrectedECC = 0
	}
	if t.RetiredPages == 0 {
		t.RetiredPages = DefaultRetiredPages
	} else if t.RetiredPages < 0 {
		t.RetiredPages = 1
	}
	if t.StuckUtilization == 0 || t.StuckUtilization > 100 {
		t.StuckUtilization = DefaultStuckUtilization
	}
	if t.StuckWindow <= 0 {
		t.StuckWindow = DefaultStuckWindow
	}
	return t
}

func (o WatchOptions) withDefaults() WatchOptions {
	if o.Poll <= 0 {
		o.Poll = 10 * time.Second
	}
	if o.Wait <= 0 {
		o.Wait = time.Second
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = time.Minute
	}
	o.Thresholds = o.Thresholds.withDefaults()
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}
