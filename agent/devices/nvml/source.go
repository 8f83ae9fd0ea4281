package nvml

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"

	"github.com/gpulayer/gpulayer/agent/devices/health"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// readFunc reads one inventory: the devices, the reasons some of them are
// unhealthy (each wrapping ErrDeviceUnhealthy), or an error when no
// inventory could be read at all.
type readFunc func(ctx context.Context) (devs []api.Device, problems []error, err error)

// Source serves the GPU inventory of one NVML library handle (real or
// mock). It satisfies agent/devices.Source. It is safe for concurrent use:
// reads are serialised with each other and with Close, because NVML must not
// be shut down while a read is in flight.
type Source struct {
	logger   *slog.Logger
	read     readFunc
	shutdown func() error
	// sample reads the GPUs' metrics (nil: a source that cannot, such as
	// go-nvml's bare mock servers).
	sample func(ctx context.Context) ([]Sample, []CallError)
	// watch observes the GPUs' health (nil: a source without NVML, whose
	// GPUs are watched trivially).
	watch func(ctx context.Context, uuids []string, opts WatchOptions, sink func(health.Observation))
	// nodes reads each GPU's device file (nil: a source without NVML).
	nodes func() (map[string]string, error)
	// repartition sets a GPU's MIG layout (nil: a source that cannot;
	// repartition.go).
	repartition func(ctx context.Context, uuid string, layout []string) error
	// preflight checks GPUs before a gang's rank starts (nil: a source
	// without NVML; preflight.go).
	preflight func(ctx context.Context, uuids []string) []PreflightCheck
	// compute runs the preflight's CUDA checks (nil: none; SetCompute).
	compute Compute

	mu           sync.Mutex
	closed       bool
	lastProblems string // joined problems of the previous read, to log changes only
}

func newSource(logger *slog.Logger, read readFunc, shutdown func() error) *Source {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Source{logger: logger, read: read, shutdown: shutdown}
}

// Devices reads a fresh inventory, sorted by index. Each call queries NVML
// again, so health changes show up on the next call. The returned slice is
// the caller's. Devices with Healthy=false are included (and may lack a UUID
// or name); callers must not offer them to work. Why a device is unhealthy
// is logged once each time the set of reasons changes.
func (s *Source) Devices(ctx context.Context) ([]api.Device, error) {
	if err := s.lockOpen(ctx); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	devs, problems, err := s.read(ctx)
	if err != nil {
		return nil, err
	}
	s.logProblems(problems)
	sortByIndex(devs)
	return devs, nil
}

// lockOpen locks s for a read and returns nil, unless ctx is done or s
// is closed: it then returns why, with s unlocked.
func (s *Source) lockOpen(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	return nil
}

// logProblems logs the unhealthy devices when they differ from the last
// read, and one line when they have all recovered. Call with s.mu held.
func (s *Source) logProblems(problems []error) {
	joined := ""
	if err := errors.Join(problems...); err != nil {
		joined = err.Error()
	}
	if joined == s.lastProblems {
		return
	}
	s.lastProblems = joined
	if joined == "" {
		s.logger.Info("all GPUs healthy again")
		return
	}
	for _, p := range problems {
		s.logger.Warn("GPU flagged unhealthy; it will not be offered", "reason", p.Error())
	}
}

// Watch observes the health of the GPUs uuids (by index, as Devices
// returned them) until ctx ends, and hands each observation to sink, from
// one goroutine: XID and double-bit ECC events as they come, and every
// opts.Poll a poll of each GPU (it still answers by its UUID, its
// uncorrected ECC count has not grown, no row remapping failed; the
// driver's recovery action where it has one). It fails closed: a GPU
// whose events can neither be registered nor polled is reported Blind,
// one that answers ERROR_GPU_IS_LOST Lost. Watch must return before
// Close is called. A source without NVML (a fake set built without cgo)
// reports every GPU Watched once.
func (s *Source) Watch(ctx context.Context, uuids []string, opts WatchOptions, sink func(health.Observation)) {
	s.mu.Lock()
	closed, w := s.closed, s.watch
	s.mu.Unlock()
	if closed {
		return
	}
	if w == nil {
		for _, u := range uuids {
			sink(health.Observation{UUID: u, Kind: health.Watched})
		}
		<-ctx.Done()
		return
	}
	w(ctx, uuids, opts, sink)
}

// Close shuts NVML down. It is idempotent; only the first call does work.
func (s *Source) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	if s.shutdown == nil {
		return nil
	}
	return s.shutdown()
}

func sortByIndex(devs []api.Device) {
	slices.SortStableFunc(devs, func(a, b api.Device) int { return a.Index - b.Index })
}

// ErrNoMetrics: the source cannot read GPU metrics.
var ErrNoMetrics = errors.New("nvml: this device source reads no GPU metrics")

// Sample reads each GPU's metrics now (the agent calls it in the
// background), and the calls that failed.
func (s *Source) Sample(ctx context.Context) ([]Sample, []CallError, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, nil, ErrClosed
	}
	if s.sample == nil {
		return nil, nil, ErrNoMetrics
	}
	samples, errs := s.sample(ctx)
	return samples, errs, nil
}
