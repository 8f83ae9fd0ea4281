//go:build cgo && linux

package nvml

import (
	"context"
	"testing"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gpulayer/gpulayer/agent/devices/cuda"
	"github.com/gpulayer/gpulayer/agent/devices/cuda/cudatest"
	"github.com/gpulayer/gpulayer/agent/devices/nvml/nvmltest"
)

// byCheck is GPU gpu's checks, "status: detail" by name.
func byCheck(checks []PreflightCheck, gpu string) map[string]string {
	out := map[string]string{}
	for _, c := range checks {
		if c.GPU == gpu {
			out[c.Name] = c.Status + ": " + c.Detail
		}
	}
	return out
}

// On the mock DGX H100 the preflight checks what NVML answers and skips,
// saying why, what needs CUDA: a sound GPU passes its memory, ECC and
// NVLink checks; a GPU with a link down, or with uncorrected ECC errors,
// fails with the figures; GPUs without NVLink skip the NVLink checks; a
// bound that has passed skips what is left.
func TestPreflightChecksWhatNVMLAnswers(t *testing.T) {
	m := nvmltest.New(nvmltest.DGXH100, nvmltest.StableUUIDs(), nvmltest.WithTopology(nvmltest.TopologyNVSwitch))
	src, err := OpenInterface(t.Context(), nil, m.Interface())
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	m.SetNvLinkState(1, 3, false)
	m.SetECCErrors(2, gonvml.MEMORY_ERROR_TYPE_UNCORRECTED, gonvml.VOLATILE_ECC, 4)
	gpus := []string{nvmltest.StableUUID(0), nvmltest.StableUUID(1), nvmltest.StableUUID(2)}
	checks := src.Preflight(t.Context(), gpus)
	if len(checks) != 3*len(preflightChecks) {
		t.Fatalf("%d checks: %+v", len(checks), checks)
	}
	for gpu, want := range map[string]map[string]string{
		gpus[0]: {"memory": "pass: 81920 MiB", "nvlink": "pass: 18/18 NVLinks active", "memory-pattern": "skipped: " + noCUDA, "matmul": "skipped: " + noCUDA, "p2p-bandwidth": "skipped: " + noCUDA},
		gpus[1]: {"nvlink": "fail: 1 of 18 NVLinks down (links 3)"},
		gpus[2]: {"ecc": "fail: 4 uncorrected ECC errors since the driver loaded", "nvlink": "pass: 18/18 NVLinks active"},
	} {
		got := byCheck(checks, gpu)
		for name, w := range want {
			if got[name] != w {
				t.Errorf("GPU %s %s: %q, want %q", gpu, name, got[name], w)
			}
		}
	}

	pcie := nvmltest.New(nvmltest.DGXH100, nvmltest.StableUUIDs(), nvmltest.WithTopology(nvmltest.TopologyPCIeOnly))
	psrc, err := OpenInterface(t.Context(), nil, pcie.Interface())
	if err != nil {
		t.Fatal(err)
	}
	defer psrc.Close()
	got := byCheck(psrc.Preflight(t.Context(), gpus[:1]), gpus[0])
	if got["nvlink"] != "skipped: no NVLink in the topology" || got["p2p-bandwidth"] != "skipped: no NVLink in the topology" {
		t.Fatalf("without NVLink: %v", got)
	}

	done, cancel := context.WithCancel(t.Context())
	cancel()
	for _, c := range src.Preflight(done, gpus) {
		if c.Status != PreflightSkipped {
			t.Fatalf("after the bound: %+v", c)
		}
	}
}

// With CUDA (the stand-in library, serving the mock DGX H100's GPUs) the
// preflight runs the compute checks too: a sound GPU passes each with its
// figures, a GPU that reads memory back wrong fails its pattern test, a
// GPU with an NVLink down skips its peer copies, and a GPU alone in its
// task has no peer to copy to.
func TestPreflightRunsTheCUDAChecks(t *testing.T) {
	m := nvmltest.New(nvmltest.DGXH100, nvmltest.StableUUIDs(), nvmltest.WithTopology(nvmltest.TopologyNVSwitch))
	src, err := OpenInterface(t.Context(), nil, m.Interface())
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	gpus := []string{nvmltest.StableUUID(0), nvmltest.StableUUID(1), nvmltest.StableUUID(2)}
	so := cudatest.Build(t, gpus...)
	lib, err := cuda.Open(so, so)
	if err != nil {
		t.Fatal(err)
	}
	src.SetCompute(lib)
	t.Setenv("FAKECUDA_TFLOPS", "350")
	t.Setenv("FAKECUDA_CORRUPT", "2:64")
	m.SetNvLinkState(1, 3, false)
	checks := src.Preflight(t.Context(), gpus)
	for gpu, want := range map[string]map[string]string{
		gpus[0]: {
			"memory-pattern": "pass: 0 words wrong; 8 MiB × 4 patterns: fill 2000.0 GB/s, copy back 2000.0 GB/s",
			"matmul":         "pass: SGEMM (TF32) 1024×1024×1024 ×50: 350.0 TFLOP/s, 71 % of the model's 494.7 (at least 50 % passes)",
			"p2p-bandwidth":  "pass: cuMemcpyPeer 8 MiB ×5: to " + gpus[1] + " 300.0 GB/s, to " + gpus[2] + " 300.0 GB/s",
		},
		gpus[1]: {"p2p-bandwidth": "skipped: an NVLink is down (the nvlink check)"},
		gpus[2]: {"memory-pattern": "fail: 4 words read back wrong, the first at byte 64 (wrote 0x00000000, read 0x00000010); 8 MiB × 4 patterns: fill 2000.0 GB/s, copy back 2000.0 GB/s"},
	} {
		got := byCheck(checks, gpu)
		for name, w := range want {
			if got[name] != w {
				t.Errorf("GPU %s %s: %q, want %q", gpu, name, got[name], w)
			}
		}
	}
	if got := byCheck(src.Preflight(t.Context(), gpus[:1]), gpus[0]); got["p2p-bandwidth"] != "skipped: no other GPU in this task to copy to" {
		t.Errorf("a GPU alone: %q", got["p2p-bandwidth"])
	}
}
