package devices

import (
	"context"
	"slices"
	"sync"

	"github.com/gpulayer/gpulayer/agent/devices/nvml"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// Source reports the GPUs of this machine.
//
// Devices returns a fresh snapshot sorted by Index; the slice is the
// caller's. Every call re-reads the hardware, so health changes show up on
// the next call; callers poll it (on register and heartbeat), it does not
// push. Devices with Healthy=false are included so they can be shown, but
// must never be offered to work; they may lack a UUID or name. Devices
// returns an error only when no inventory can be produced at all: ctx is
// done, the source is closed (ErrClosed), or a system-wide query failed
// (ErrQuery). A machine without GPUs is an empty slice and a nil error.
//
// Implementations are safe for concurrent use. Close releases the
// underlying library; it is idempotent, and Devices after Close returns
// ErrClosed.
type Source interface {
	Devices(ctx context.Context) ([]api.Device, error)
	Close() error
}

var (
	_ Source = (*nvml.Source)(nil)
	_ Source = (*staticSource)(nil)
)

// Static returns a Source that always reports a copy of devs, sorted by
// Index. Static() with no devices is a machine without GPUs. It is also a
// convenient fake for tests of code that consumes a Source.
func Static(devs ...api.Device) Source {
	devs = slices.Clone(devs)
	slices.SortStableFunc(devs, func(a, b api.Device) int { return a.Index - b.Index })
	return &staticSource{devs: devs}
}

type staticSource struct {
	devs []api.Device

	mu     sync.Mutex
	closed bool
}

func (s *staticSource) Devices(ctx context.Context) ([]api.Device, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	return slices.Clone(s.devs), nil
}

func (s *staticSource) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return nil
}
