// The CUDA driver API and cuBLAS entry points the preflight uses, loaded
// at run time with dlopen (no CUDA header or library at build time), and
// the checks written against them. Types are the ABI's: CUresult and
// cublasStatus_t are ints, CUdeviceptr a 64-bit integer, handles
// pointers.
#ifndef GPULAYER_CUDA_SHIM_H
#define GPULAYER_CUDA_SHIM_H

#include <stddef.h>

typedef struct gl_cuda gl_cuda;

// gl_open loads libcuda at cuda_path, resolves every entry point and calls
// cuInit. On failure it returns NULL and writes why into err.
gl_cuda *gl_open(const char *cuda_path, char *err, size_t errlen);
// gl_load_cublas loads cuBLAS at cublas_path for the matmul check: 1, or
// 0 with why in err (c is unchanged then).
int gl_load_cublas(gl_cuda *c, const char *cublas_path, char *err, size_t errlen);
int gl_has_cublas(gl_cuda *c);

// gl_find returns the ordinal of the device whose UUID is the 16 bytes
// uuid, or -1; a CUDA error is returned negated below -1.
int gl_find(gl_cuda *c, const unsigned char *uuid);

// A check's outcome: rc is 0 or the CUresult/cublasStatus_t of the call
// named by step.
typedef struct {
	int rc;
	const char *step;
	double ms;            // time the timed work took (CUDA events)
	double ms2;           // a second figure (the copy back, for the pattern test)
	unsigned long long bytes;
	unsigned long long mismatches;
	unsigned long long first_bad;  // byte offset of the first mismatch
	unsigned int want, got;        // the word expected and read there
	int can_access;                // p2p: the driver says the peer is reachable
} gl_result;

// gl_pattern allocates bytes on device dev, fills it with four 32-bit
// patterns in turn (cuMemsetD32), copies each back in chunks and compares.
void gl_pattern(gl_cuda *c, int dev, unsigned long long bytes, gl_result *r);
// gl_mem_free is the free memory on dev (cuMemGetInfo).
void gl_mem_free(gl_cuda *c, int dev, unsigned long long *free_bytes, gl_result *r);
// gl_gemm times iters n×n×n SGEMMs (TF32 tensor-op math when tf32).
void gl_gemm(gl_cuda *c, int dev, int n, int iters, int tf32, gl_result *r);
// gl_peer copies bytes from dev to peer iters times (cuMemcpyPeer) when
// the driver says dev can reach it.
void gl_peer(gl_cuda *c, int dev, int peer, unsigned long long bytes, int iters, gl_result *r);

#endif
