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
	Clock      clock.Clock
	Logger     *slog.Logger
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
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}
