//go:build cgo && linux

package cuda

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/gpulayer/gpulayer/internal/gpusku"
)

// Sizes of the checks' work: the pattern test covers an eighth of the
// free memory up to 1 GiB; the SGEMM is 8192² (smaller where memory is
// short) fifty times, after one untimed call (about 55 TFLOP: a few
// tenths of a second on an H100); each peer copy 256 MiB (or an eighth
// of the free memory) five times.
const (
	patternMax   = 1 << 30
	gemmN        = 8192
	gemmIters    = 50
	peerMax      = 256 << 20
	peerIters    = 5
	boundPassed  = "the preflight's time bound passed first"
	boundOverrun = "did not finish within the preflight's time bound (the CUDA call still runs; the checks after it are skipped)"
)

// run runs fn's CUDA calls on a goroutine of its own, holding busy,
// and waits for them only while ctx lasts.
func (l *Lib) run(ctx context.Context, fn func() Outcome) Outcome {
	select {
	case l.busy <- struct{}{}:
	case <-ctx.Done():
		return Outcome{Skipped, boundPassed}
	}
	if ctx.Err() != nil {
		<-l.busy
		return Outcome{Skipped, boundPassed}
	}
	done := make(chan Outcome, 1)
	go func() {
		defer func() { <-l.busy }()
		done <- fn()
	}()
	select {
	case o := <-done:
		return o
	case <-ctx.Done():
		return Outcome{Fail, boundOverrun}
	}
}

// MemoryPattern writes four 32-bit patterns over a bounded share of the
// GPU's free memory and reads each back: a word read back wrong fails
// the GPU, naming the first.
func (l *Lib) MemoryPattern(ctx context.Context, uuid string) Outcome {
	return l.run(ctx, func() Outcome {
		dev, free, err := l.deviceAndFree(uuid)
		if err != nil {
			return failed(err)
		}
		size := min(free/8, patternMax) &^ 3
		r := l.pattern(dev, size)
		if r.err != nil {
			return Outcome{Fail, r.err.Error()}
		}
		figures := fmt.Sprintf("%d MiB × 4 patterns: fill %.1f GB/s, copy back %.1f GB/s", size>>20, gbps(r.bytes, r.ms), gbps(r.bytes, r.ms2))
		if r.mismatches > 0 {
			return Outcome{Fail, fmt.Sprintf("%d words read back wrong, the first at byte %d (wrote 0x%08x, read 0x%08x); %s", r.mismatches, r.firstBad, r.want, r.got, figures)}
		}
		return Outcome{Pass, "0 words wrong; " + figures}
	})
}

// Matmul times SGEMMs with TF32 tensor-op math against the model's dense
// TF32 peak (gpusku.MatmulTF32): under MinMatmulFraction of it fails.
func (l *Lib) Matmul(ctx context.Context, uuid, model string) Outcome {
	if !l.HasCUBLAS() {
		return Outcome{Skipped, "no cuBLAS on this agent"}
	}
	return l.run(ctx, func() Outcome {
		dev, free, err := l.deviceAndFree(uuid)
		if err != nil {
			return failed(err)
		}
		n := gemmN
		for n > 256 && uint64(3*n*n*4) > free/4 {
			n /= 2
		}
		r := l.gemm(dev, n, gemmIters)
		if r.err != nil {
			return Outcome{Fail, r.err.Error()}
		}
		if r.ms <= 0 {
			return Outcome{Fail, "the SGEMMs took no measurable time"}
		}
		tflops := 2 * float64(n) * float64(n) * float64(n) * gemmIters / (r.ms / 1e3) / 1e12
		figures := fmt.Sprintf("SGEMM (TF32) %d×%d×%d ×%d: %.1f TFLOP/s", n, n, n, gemmIters, tflops)
		want, ok := gpusku.MatmulTF32(model)
		if !ok {
			return Outcome{Skipped, figures + fmt.Sprintf("; no expected figure for model %q", model)}
		}
		share := tflops / want
		figures += fmt.Sprintf(", %.0f %% of the model's %.1f (at least %.0f %% passes)", share*100, want, MinMatmulFraction*100)
		if share < MinMatmulFraction {
			return Outcome{Fail, figures}
		}
		return Outcome{Pass, figures}
	})
}

// PeerBandwidth copies from the GPU to each of peers the driver says it
// can reach directly, and reports the bandwidth of each. A copy the
// driver allows and that fails fails the GPU; no reachable peer is
// skipped.
func (l *Lib) PeerBandwidth(ctx context.Context, uuid string, peers []string) Outcome {
	if len(peers) == 0 {
		return Outcome{Skipped, "no other GPU in this task to copy to"}
	}
	return l.run(ctx, func() Outcome {
		dev, free, err := l.deviceAndFree(uuid)
		if err != nil {
			return failed(err)
		}
		size := min(free/8, peerMax) &^ 3
		var figures []string
		for _, p := range peers {
			pd, err := l.device(p)
			if err != nil {
				return failed(err)
			}
			r := l.peer(dev, pd, size, peerIters)
			switch {
			case r.err != nil:
				return Outcome{Fail, fmt.Sprintf("to %s: %v", p, r.err)}
			case !r.canAccess:
				continue
			case r.ms <= 0:
				return Outcome{Fail, fmt.Sprintf("to %s: the copies took no measurable time", p)}
			}
			figures = append(figures, fmt.Sprintf("to %s %.1f GB/s", p, gbps(r.bytes, r.ms)))
		}
		if len(figures) == 0 {
			return Outcome{Skipped, fmt.Sprintf("the driver reaches none of the %d other GPUs directly", len(peers))}
		}
		return Outcome{Pass, fmt.Sprintf("cuMemcpyPeer %d MiB ×%d: %s", size>>20, peerIters, strings.Join(figures, ", "))}
	})
}

// errNotVisible: CUDA lists no device with the GPU's UUID, though NVML
// does: the agent's own CUDA_VISIBLE_DEVICES may hide it. Its checks are
// skipped, not failed: the fault may be the agent's environment.
var errNotVisible = errors.New("CUDA shows this agent no device with UUID")

// failed is the outcome of a check that could not run for err: skipped
// where CUDA does not show the agent the GPU, else failed.
func failed(err error) Outcome {
	if errors.Is(err, errNotVisible) {
		return Outcome{Skipped, err.Error()}
	}
	return Outcome{Fail, err.Error()}
}

// deviceAndFree finds the GPU NVML names uuid and reads its free memory.
func (l *Lib) deviceAndFree(uuid string) (int, uint64, error) {
	dev, err := l.device(uuid)
	if err != nil {
		return 0, 0, err
	}
	free, err := l.memFree(dev)
	return dev, free, err
}

func gbps(bytes uint64, ms float64) float64 {
	if ms <= 0 {
		return 0
	}
	return float64(bytes) / (ms / 1e3) / 1e9
}
