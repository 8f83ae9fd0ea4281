// Package cuda runs the preflight checks that need the GPU to compute: a
// memory pattern test, an SGEMM throughput check against the model's
// figure (internal/gpusku) and a peer-to-peer copy over NVLink. It needs
// no CUDA to build or to run: the CUDA driver API (libcuda.so.1) and
// cuBLAS (libcublas.so.*) are loaded at run time with dlopen, as go-nvml
// loads NVML, and where they are absent Open fails with ErrUnavailable and
// the agent reports those checks "skipped: no CUDA".
//
// Each check runs its CUDA calls on a goroutine of its own and is waited
// for only until the preflight's context ends: a call that hangs fails
// its check ("did not finish within the preflight's bound"), and the
// checks after it, which would queue behind it on the GPU, are skipped.
//
// Tested here against cudatest's fakecuda.c, a stand-in library built by
// the tests that keeps device memory in host memory and time on a virtual
// clock; the real CUDA path has not run on a GPU in these tests
// (scripts/gpu-check.sh runs it where one is lent).
package cuda
