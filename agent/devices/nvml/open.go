//go:build cgo && linux

package nvml

import (
	"context"
	"fmt"
	"log/slog"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxb200"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh200"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"

	"github.com/gpulayer/gpulayer/agent/devices/health"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// fakeServers builds go-nvml's mock server for each fake set.
var fakeServers = map[string]func() *server.Server{
	FakeDGXA100: dgxa100.New,
	FakeDGXH100: dgxh100.New,
	FakeDGXH200: dgxh200.New,
	FakeDGXB200: dgxb200.New,
}

// Open loads the system's NVML library (libnvidia-ml.so.1) and initialises
// it. When that fails the error wraps ErrUnavailable and says why (for
// example that the library was not found); no further NVML call is made.
// The logger may be nil.
func Open(ctx context.Context, logger *slog.Logger) (*Source, error) {
	return OpenInterface(ctx, logger, gonvml.New())
}

// OpenInterface serves lib, an NVML library (the system's, or a test
// fixture's: agent/devices/nvml/nvmltest), read with its topology
// (topology.go) and watched (Watch). The fake sets of OpenFake are
// neither: go-nvml's bare mock servers answer no health or topology call,
// and have no faults to report.
func OpenInterface(ctx context.Context, logger *slog.Logger, lib gonvml.Interface) (*Source, error) {
	src, err := openLib(ctx, logger, lib)
	if err != nil {
		return nil, err
	}
	src.read = withTopology(src.read, lib, src.logger)
	src.sample = samplerOf(lib)
	src.watchWith(logger, lib)
	src.repartition = func(ctx context.Context, uuid string, layout []string) error {
		return repartition(ctx, lib, uuid, layout)
	}
	src.preflight = func(ctx context.Context, uuids []string) []PreflightCheck {
		return preflight(ctx, lib, src.compute, uuids)
	}
	return src, nil
}

// watchWith makes Watch observe lib.
func (s *Source) watchWith(logger *slog.Logger, lib gonvml.Interface) {
	s.watch = func(ctx context.Context, uuids []string, opts WatchOptions, sink func(health.Observation)) {
		if opts.Logger == nil {
			opts.Logger = logger
		}
		watch(ctx, lib, uuids, opts, sink)
	}
}

// OpenFake serves the named fake GPU set (see FakeNames) from go-nvml's mock
// server, read through the same code as the real library. UUIDs are random
// per call and stable for the Source's lifetime. The logger may be nil.
func OpenFake(ctx context.Context, logger *slog.Logger, name string) (*Source, error) {
	return OpenFakeSeeded(ctx, logger, name, "")
}

// OpenFakeSeeded is OpenFake with the GPUs' UUIDs derived from seed (the
// agent's data dir): stable across restarts on it. An empty seed keeps
// the mock server's random UUIDs.
func OpenFakeSeeded(ctx context.Context, logger *slog.Logger, name, seed string) (*Source, error) {
	newServer, ok := fakeServers[name]
	if !ok {
		return nil, fmt.Errorf("%w %q (want one of %v)", ErrUnknownFake, name, FakeNames())
	}
	srv := newServer()
	if seed != "" {
		for i, d := range srv.Devices {
			if sd, ok := d.(*server.Device); ok {
				sd.UUID = seededUUID(seed, name, i)
			}
		}
	}
	return openLib(ctx, logger, srv)
}

// openLib initialises lib and wraps it in a Source. If Init fails it
// returns at once: any NVML call after a failed Init may kill the process.
func openLib(ctx context.Context, logger *slog.Logger, lib gonvml.Interface) (*Source, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if ret := lib.Init(); ret != gonvml.SUCCESS {
		return nil, fmt.Errorf("%w: init: %s", ErrUnavailable, describe(ret))
	}
	read := func(ctx context.Context) ([]api.Device, []error, error) {
		return inventory(ctx, lib)
	}
	shutdown := func() error {
		if ret := lib.Shutdown(); ret != gonvml.SUCCESS {
			return fmt.Errorf("nvml shutdown: %s", describe(ret))
		}
		return nil
	}
	src := newSource(logger, read, shutdown)
	src.nodes = nodesOf(lib)
	return src, nil
}
