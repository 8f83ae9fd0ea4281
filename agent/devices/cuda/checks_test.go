//go:build cgo && linux

package cuda

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/agent/devices/cuda/cudatest"
)

const (
	gpu0 = "GPU-00000000-0000-0000-0000-000000000001"
	gpu1 = "GPU-00000000-0000-0000-0000-0000000000a2"
	h100 = "NVIDIA H100 80GB HBM3"
)

// fakeLib opens the stand-in library (cudatest) through Open, as libcuda
// and as cuBLAS, serving gpu0 and gpu1.
func fakeLib(t *testing.T) *Lib {
	t.Helper()
	so := cudatest.Build(t, gpu0, gpu1)
	l, err := Open(so, so)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func want(t *testing.T, what string, got Outcome, status string, parts ...string) {
	t.Helper()
	if got.Status != status {
		t.Fatalf("%s: %s (%s), want %s", what, got.Status, got.Detail, status)
	}
	for _, p := range parts {
		if !strings.Contains(got.Detail, p) {
			t.Fatalf("%s: %q lacks %q", what, got.Detail, p)
		}
	}
}

// A sound GPU passes the pattern test with its figures; one that reads a
// byte back wrong fails, naming where, and the other GPU still passes; a
// GPU CUDA does not show the agent is skipped, saying so.
func TestMemoryPattern(t *testing.T) {
	l := fakeLib(t)
	ctx := context.Background()
	t.Setenv("FAKECUDA_FREE_MIB", "64")
	t.Setenv("FAKECUDA_MEM_GBPS", "1500")
	want(t, "sound", l.MemoryPattern(ctx, gpu0), Pass, "0 words wrong", "8 MiB × 4 patterns", "fill 1500.0 GB/s", "copy back 1500.0 GB/s")
	t.Setenv("FAKECUDA_CORRUPT", "1:4096")
	want(t, "corrupt", l.MemoryPattern(ctx, gpu1), Fail, "4 words read back wrong", "first at byte 4096", "wrote 0x00000000, read 0x00000010", "fill 1500.0 GB/s")
	want(t, "the other GPU", l.MemoryPattern(ctx, gpu0), Pass, "0 words wrong")
	want(t, "a GPU CUDA does not show", l.MemoryPattern(ctx, "GPU-00000000-0000-0000-0000-00000000ffff"), Skipped, "no device with UUID")
	want(t, "not a UUID", l.MemoryPattern(ctx, "GPU-zz"), Fail, "not a GPU UUID")
}

// The SGEMM's throughput is held against the model's figure: at 400
// TFLOP/s an H100 (494.7) passes, at 100 it fails, a model with no
// figure is skipped with what was measured, and without cuBLAS the check
// is skipped.
func TestMatmul(t *testing.T) {
	l := fakeLib(t)
	ctx := context.Background()
	t.Setenv("FAKECUDA_TFLOPS", "400")
	want(t, "fast", l.Matmul(ctx, gpu0, h100), Pass, "400.0 TFLOP/s", "81 % of the model's 494.7")
	t.Setenv("FAKECUDA_TFLOPS", "100")
	want(t, "slow", l.Matmul(ctx, gpu0, h100), Fail, "100.0 TFLOP/s", "20 % of the model's 494.7", "at least 50 % passes")
	want(t, "unknown model", l.Matmul(ctx, gpu0, "NVIDIA Imaginary"), Skipped, "100.0 TFLOP/s", "no expected figure")
	noBLAS, err := Open(cudatest.Build(t, gpu0), "")
	if err != nil {
		t.Fatal(err)
	}
	want(t, "no cuBLAS", noBLAS.Matmul(ctx, gpu0, h100), Skipped, "no cuBLAS")
}

// Peer copies report each peer's bandwidth; where the driver reaches no
// peer, or the task has no other GPU, the check is skipped.
func TestPeerBandwidth(t *testing.T) {
	l := fakeLib(t)
	ctx := context.Background()
	t.Setenv("FAKECUDA_PEER_GBPS", "350")
	want(t, "NVLink", l.PeerBandwidth(ctx, gpu0, []string{gpu1}), Pass, "to "+gpu1+" 350.0 GB/s", "8 MiB ×5")
	t.Setenv("FAKECUDA_NOPEER", "1")
	want(t, "no P2P", l.PeerBandwidth(ctx, gpu0, []string{gpu1}), Skipped, "reaches none of the 1 other GPUs")
	want(t, "alone", l.PeerBandwidth(ctx, gpu0, nil), Skipped, "no other GPU")
}

// A CUDA call that hangs fails its check when the bound passes, long
// before the call returns, and the next check, which would queue behind
// it, is skipped at once.
func TestTheBoundIsEnforced(t *testing.T) {
	l := fakeLib(t)
	t.Setenv("FAKECUDA_HANG_MS", "400")
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	began := time.Now()
	want(t, "hung", l.MemoryPattern(ctx, gpu0), Fail, "did not finish within the preflight's time bound")
	if took := time.Since(began); took >= 400*time.Millisecond {
		t.Fatalf("the check returned after %s, not at its 50ms bound", took)
	}
	next, cancel2 := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel2()
	want(t, "behind it", l.Matmul(next, gpu0, h100), Skipped, "bound passed first")
	// The hung calls end on their own; wait for them before the next
	// test uses the stand-in library.
	select {
	case l.busy <- struct{}{}:
		<-l.busy
	case <-time.After(30 * time.Second):
		t.Fatal("the hung check never released the GPU")
	}
}

// A missing library is ErrUnavailable, with why.
func TestOpenWithoutCUDA(t *testing.T) {
	_, err := Open(filepath.Join(t.TempDir(), "libcuda.so.1"), "")
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "libcuda.so.1") {
		t.Fatalf("err %v, want ErrUnavailable naming the library", err)
	}
}
