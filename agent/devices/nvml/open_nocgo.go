//go:build !cgo || !linux

package nvml

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// Open always fails in this build: NVML needs cgo. The error wraps both
// ErrUnavailable and ErrNoCgo.
func Open(ctx context.Context, _ *slog.Logger) (*Source, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("%w: %w", ErrUnavailable, ErrNoCgo)
}

// OpenFake serves the named fake GPU set (see FakeNames). go-nvml's mock
// servers need cgo, so this build serves the same inventory from a pure-Go
// table that a cgo test keeps identical to the mocks. UUIDs are random per
// call and stable for the Source's lifetime. The logger may be nil.
func OpenFake(ctx context.Context, logger *slog.Logger, name string) (*Source, error) {
	return OpenFakeSeeded(ctx, logger, name, "")
}

// OpenFakeSeeded is OpenFake with the GPUs' UUIDs derived from seed (the
// agent's data dir): stable across restarts on it. An empty seed gives
// random ones.
func OpenFakeSeeded(ctx context.Context, logger *slog.Logger, name, seed string) (*Source, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	spec, ok := fakeSpecs[name]
	if !ok {
		return nil, fmt.Errorf("%w %q (want one of %v)", ErrUnknownFake, name, FakeNames())
	}
	devs := make([]api.Device, spec.count)
	for i := range devs {
		devs[i] = api.Device{
			Index:             i,
			UUID:              fakeUUID(seed, name, i),
			Name:              spec.name,
			MemoryMiB:         spec.memoryMiB,
			DriverVersion:     spec.driverVersion,
			CUDAVersion:       spec.cudaVersion,
			ComputeCapability: spec.computeCapability,
			PCIDevice:         spec.pciDevice,
			Healthy:           true,
		}
	}
	read := func(context.Context) ([]api.Device, []error, error) {
		return append([]api.Device(nil), devs...), nil, nil
	}
	return newSource(logger, read, nil), nil
}

// randomUUID returns a random (version 4) UUID in canonical form, as the
// go-nvml mock servers use after their "GPU-" prefix.
func randomUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms.
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// fakeUUID is fake GPU i's UUID: seeded, or random without a seed.
func fakeUUID(seed, set string, i int) string {
	if seed == "" {
		return "GPU-" + randomUUID()
	}
	return seededUUID(seed, set, i)
}

// OpenFakeWithFaults needs go-nvml's mock servers, and so cgo.
func OpenFakeWithFaults(ctx context.Context, _ *slog.Logger, name, _, _ string) (*Source, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("fake GPU faults for %q: %w", name, ErrNoCgo)
}
