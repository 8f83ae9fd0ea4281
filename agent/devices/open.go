package devices

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/gpulayer/gpulayer/agent/devices/cuda"
	"github.com/gpulayer/gpulayer/agent/devices/nvml"
)

// Values of Open's fake argument besides the FakeNames.
const (
	// FakeReal (the empty string) means: use the system's NVML library.
	FakeReal = ""
	// FakeNone means: report zero GPUs without touching NVML.
	FakeNone = "none"
)

// FakeNames lists the fake GPU sets Open accepts, sorted ("dgxa100",
// "dgxb200", "dgxh100", "dgxh200"): go-nvml's mock DGX servers, eight GPUs
// each.
func FakeNames() []string { return nvml.FakeNames() }

// Open returns the GPU Source selected by fake:
//
//   - "" (FakeReal): the system's NVML library. If NVML cannot be
//     initialised (no driver or library, no permission, or a binary built
//     without cgo) Open logs one warning saying why and returns a Source
//     with zero GPUs; that is not an error.
//   - "none" (FakeNone): zero GPUs; NVML is not touched.
//   - one of FakeNames: that fake set, read from go-nvml's mock server
//     through the same code as the real library.
//
// Any other name is an error wrapping ErrUnknownFake. The logger may be nil
// (slog.Default is used); it is tagged component=devices.
func Open(ctx context.Context, logger *slog.Logger, fake string) (Source, error) {
	return OpenSeeded(ctx, logger, fake, "")
}

// OpenSeeded is Open with a fake set's GPU UUIDs derived from seed (the
// agent's data dir), so that an agent restarted on it reports the same
// fake GPUs; an empty seed gives random ones. Real GPUs are unaffected.
func OpenSeeded(ctx context.Context, logger *slog.Logger, fake, seed string) (Source, error) {
	if logger == nil {
		logger = slog.Default()
	}
	logger = logger.With("component", "devices")
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	switch fake {
	case FakeNone:
		logger.Info("GPU discovery disabled; reporting zero GPUs", "fake_gpus", fake)
		return Static(), nil
	case FakeReal:
		src, err := nvml.Open(ctx, logger)
		if errors.Is(err, nvml.ErrUnavailable) {
			logger.Warn("NVML unavailable; reporting zero GPUs", "reason", err.Error())
			return Static(), nil
		}
		if err != nil {
			return nil, fmt.Errorf("open nvml: %w", err)
		}
		withCUDA(src, logger)
		return src, nil
	default:
		src, err := nvml.OpenFakeSeeded(ctx, logger, fake, seed)
		if err != nil {
			return nil, fmt.Errorf("open fake gpus: %w", err)
		}
		logger.Info("serving fake GPUs", "fake_gpus", fake)
		return src, nil
	}
}

// ErrFaultsNeedFake: fake GPU faults were asked for without a fake set.
var ErrFaultsNeedFake = errors.New("fake GPU faults need a fake GPU set")

// OpenFakeWithFaults serves fake GPU set fake (one of FakeNames), its
// UUIDs derived from seed, watched for health, with the faults appended
// to the file at faults delivered to it (nvml.OpenFakeWithFaults: lines
// "<uuid> xid <n>" or "<uuid> lost").
func OpenFakeWithFaults(ctx context.Context, logger *slog.Logger, fake, seed, faults string) (Source, error) {
	if logger == nil {
		logger = slog.Default()
	}
	logger = logger.With("component", "devices")
	if fake == FakeNone || fake == FakeReal {
		return nil, fmt.Errorf("%w (--fake-gpus %s)", ErrFaultsNeedFake, FakeNames())
	}
	src, err := nvml.OpenFakeWithFaults(ctx, logger, fake, seed, faults)
	if err != nil {
		return nil, fmt.Errorf("open fake gpus: %w", err)
	}
	logger.Info("serving fake GPUs with injected faults", "fake_gpus", fake, "faults_file", faults)
	return src, nil
}

// withCUDA gives src's preflight its compute checks where the CUDA driver
// loads (agent/devices/cuda); without it they are reported skipped.
func withCUDA(src *nvml.Source, logger *slog.Logger) {
	lib, err := cuda.OpenSystem()
	if err != nil {
		logger.Info("no CUDA: the preflight's memory pattern, matmul and peer bandwidth checks are skipped", "reason", err.Error())
		return
	}
	src.SetCompute(lib)
	logger.Info("CUDA loaded for the preflight's compute checks", "cublas", lib.HasCUBLAS())
}
