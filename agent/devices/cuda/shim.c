//go:build cgo && linux

#include "shim.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext;
typedef unsigned long long CUdeviceptr;
typedef void *CUevent;
typedef void *CUstream;
typedef void *cublasHandle_t;

struct gl_cuda {
	void *lib, *blas;
	CUresult (*cuInit)(unsigned);
	CUresult (*cuDeviceGetCount)(int *);
	CUresult (*cuDeviceGet)(CUdevice *, int);
	CUresult (*cuDeviceGetUuid)(unsigned char *, CUdevice);
	CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
	CUresult (*cuDevicePrimaryCtxRelease)(CUdevice);
	CUresult (*cuCtxSetCurrent)(CUcontext);
	CUresult (*cuCtxSynchronize)(void);
	CUresult (*cuMemGetInfo)(size_t *, size_t *);
	CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
	CUresult (*cuMemFree)(CUdeviceptr);
	CUresult (*cuMemsetD32)(CUdeviceptr, unsigned int, size_t);
	CUresult (*cuMemcpyDtoH)(void *, CUdeviceptr, size_t);
	CUresult (*cuMemcpyPeer)(CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t);
	CUresult (*cuDeviceCanAccessPeer)(int *, CUdevice, CUdevice);
	CUresult (*cuCtxEnablePeerAccess)(CUcontext, unsigned int);
	CUresult (*cuEventCreate)(CUevent *, unsigned int);
	CUresult (*cuEventRecord)(CUevent, CUstream);
	CUresult (*cuEventSynchronize)(CUevent);
	CUresult (*cuEventElapsedTime)(float *, CUevent, CUevent);
	CUresult (*cuEventDestroy)(CUevent);
	int (*cublasCreate)(cublasHandle_t *);
	int (*cublasDestroy)(cublasHandle_t);
	int (*cublasSetMathMode)(cublasHandle_t, int);
	int (*cublasSgemm)(cublasHandle_t, int, int, int, int, int, const float *, const float *, int,
	                   const float *, int, const float *, float *, int);
};

#define CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED 704
#define CUBLAS_OP_N 0
#define CUBLAS_TF32_TENSOR_OP_MATH 3

static int sym(void *lib, const char *name, void **out, char *err, size_t errlen) {
	*out = dlsym(lib, name);
	if (*out == NULL) {
		snprintf(err, errlen, "%s not found", name);
		return 0;
	}
	return 1;
}

#define SYM(lib, field, name) if (!sym(lib, name, (void **)&c->field, err, errlen)) goto fail

gl_cuda *gl_open(const char *cuda_path, char *err, size_t errlen) {
	gl_cuda *c = calloc(1, sizeof *c);
	if (c == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	c->lib = dlopen(cuda_path, RTLD_NOW | RTLD_LOCAL);
	if (c->lib == NULL) {
		const char *why = dlerror();
		snprintf(err, errlen, "%s", why ? why : "dlopen failed");
		free(c);
		return NULL;
	}
	SYM(c->lib, cuInit, "cuInit");
	SYM(c->lib, cuDeviceGetCount, "cuDeviceGetCount");
	SYM(c->lib, cuDeviceGet, "cuDeviceGet");
	SYM(c->lib, cuDeviceGetUuid, "cuDeviceGetUuid");
	SYM(c->lib, cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
	SYM(c->lib, cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
	SYM(c->lib, cuCtxSetCurrent, "cuCtxSetCurrent");
	SYM(c->lib, cuCtxSynchronize, "cuCtxSynchronize");
	SYM(c->lib, cuMemGetInfo, "cuMemGetInfo_v2");
	SYM(c->lib, cuMemAlloc, "cuMemAlloc_v2");
	SYM(c->lib, cuMemFree, "cuMemFree_v2");
	SYM(c->lib, cuMemsetD32, "cuMemsetD32_v2");
	SYM(c->lib, cuMemcpyDtoH, "cuMemcpyDtoH_v2");
	SYM(c->lib, cuMemcpyPeer, "cuMemcpyPeer");
	SYM(c->lib, cuDeviceCanAccessPeer, "cuDeviceCanAccessPeer");
	SYM(c->lib, cuCtxEnablePeerAccess, "cuCtxEnablePeerAccess");
	SYM(c->lib, cuEventCreate, "cuEventCreate");
	SYM(c->lib, cuEventRecord, "cuEventRecord");
	SYM(c->lib, cuEventSynchronize, "cuEventSynchronize");
	SYM(c->lib, cuEventElapsedTime, "cuEventElapsedTime");
	SYM(c->lib, cuEventDestroy, "cuEventDestroy_v2");
	CUresult rc = c->cuInit(0);
	if (rc != 0) {
		snprintf(err, errlen, "cuInit: CUDA error %d", rc);
		goto fail;
	}
	return c;
fail:
	dlclose(c->lib);
	free(c);
	return NULL;
}

int gl_load_cublas(gl_cuda *c, const char *cublas_path, char *err, size_t errlen) {
	void *blas = dlopen(cublas_path, RTLD_NOW | RTLD_LOCAL);
	if (blas == NULL) {
		const char *why = dlerror();
		snprintf(err, errlen, "%s", why ? why : "dlopen failed");
		return 0;
	}
	if (!sym(blas, "cublasCreate_v2", (void **)&c->cublasCreate, err, errlen) ||
	    !sym(blas, "cublasDestroy_v2", (void **)&c->cublasDestroy, err, errlen) ||
	    !sym(blas, "cublasSetMathMode", (void **)&c->cublasSetMathMode, err, errlen) ||
	    !sym(blas, "cublasSgemm_v2", (void **)&c->cublasSgemm, err, errlen)) {
		dlclose(blas);
		return 0;
	}
	c->blas = blas;
	return 1;
}

int gl_has_cublas(gl_cuda *c) { return c->blas != NULL; }

int gl_find(gl_cuda *c, const unsigned char *uuid) {
	int n = 0;
	CUresult rc = c->cuDeviceGetCount(&n);
	if (rc != 0) return -1 - rc;
	for (int i = 0; i < n; i++) {
		CUdevice d;
		unsigned char u[16];
		if (c->cuDeviceGet(&d, i) != 0 || c->cuDeviceGetUuid(u, d) != 0) continue;
		if (memcmp(u, uuid, 16) == 0) return d;
	}
	return -1;
}

#define TRY(r, name, call) do { CUresult rc_ = (call); if (rc_ != 0) { (r)->rc = rc_; (r)->step = name; goto out; } } while (0)

// use makes dev's primary context current; a context retained is released
// by release.
static int use(gl_cuda *c, int dev, CUcontext *ctx, gl_result *r) {
	CUresult rc = c->cuDevicePrimaryCtxRetain(ctx, dev);
	if (rc != 0) { r->rc = rc; r->step = "cuDevicePrimaryCtxRetain"; return 0; }
	rc = c->cuCtxSetCurrent(*ctx);
	if (rc != 0) { r->rc = rc; r->step = "cuCtxSetCurrent"; c->cuDevicePrimaryCtxRelease(dev); return 0; }
	return 1;
}

static double elapsed(gl_cuda *c, CUevent a, CUevent b) {
	float ms = 0;
	c->cuEventElapsedTime(&ms, a, b);
	return ms;
}

void gl_mem_free(gl_cuda *c, int dev, unsigned long long *free_bytes, gl_result *r) {
	CUcontext ctx;
	size_t fr = 0, total = 0;
	memset(r, 0, sizeof *r);
	if (!use(c, dev, &ctx, r)) return;
	TRY(r, "cuMemGetInfo", c->cuMemGetInfo(&fr, &total));
	*free_bytes = fr;
out:
	c->cuDevicePrimaryCtxRelease(dev);
}

#define CHUNK (64ull << 20)

void gl_pattern(gl_cuda *c, int dev, unsigned long long bytes, gl_result *r) {
	static const unsigned int patterns[] = {0x00000000u, 0xffffffffu, 0xa5a5a5a5u, 0x5a5a5a5au};
	CUcontext ctx;
	CUdeviceptr p = 0;
	CUevent e0 = NULL, e1 = NULL;
	unsigned int *host = NULL;
	memset(r, 0, sizeof *r);
	bytes &= ~3ull;
	if (!use(c, dev, &ctx, r)) return;
	host = malloc(bytes < CHUNK ? bytes : CHUNK);
	if (host == NULL) { r->rc = -1; r->step = "malloc"; goto out; }
	TRY(r, "cuMemAlloc", c->cuMemAlloc(&p, bytes));
	TRY(r, "cuEventCreate", c->cuEventCreate(&e0, 0));
	TRY(r, "cuEventCreate", c->cuEventCreate(&e1, 0));
	for (size_t k = 0; k < sizeof patterns / sizeof patterns[0]; k++) {
		unsigned int want = patterns[k];
		TRY(r, "cuEventRecord", c->cuEventRecord(e0, NULL));
		TRY(r, "cuMemsetD32", c->cuMemsetD32(p, want, bytes / 4));
		TRY(r, "cuEventRecord", c->cuEventRecord(e1, NULL));
		TRY(r, "cuEventSynchronize", c->cuEventSynchronize(e1));
		r->ms += elapsed(c, e0, e1);
		for (unsigned long long off = 0; off < bytes; off += CHUNK) {
			unsigned long long n = bytes - off < CHUNK ? bytes - off : CHUNK;
			TRY(r, "cuEventRecord", c->cuEventRecord(e0, NULL));
			TRY(r, "cuMemcpyDtoH", c->cuMemcpyDtoH(host, p + off, n));
			TRY(r, "cuEventRecord", c->cuEventRecord(e1, NULL));
			TRY(r, "cuEventSynchronize", c->cuEventSynchronize(e1));
			r->ms2 += elapsed(c, e0, e1);
			for (unsigned long long i = 0; i < n / 4; i++) {
				if (host[i] != want) {
					if (r->mismatches == 0) {
						r->first_bad = off + i * 4;
						r->want = want;
						r->got = host[i];
					}
					r->mismatches++;
				}
			}
		}
		r->bytes += bytes;
	}
out:
	if (e0) c->cuEventDestroy(e0);
	if (e1) c->cuEventDestroy(e1);
	if (p) c->cuMemFree(p);
	free(host);
	c->cuDevicePrimaryCtxRelease(dev);
}

void gl_gemm(gl_cuda *c, int dev, int n, int iters, int tf32, gl_result *r) {
	CUcontext ctx;
	CUdeviceptr a = 0, b = 0, d = 0;
	CUevent e0 = NULL, e1 = NULL;
	cublasHandle_t h = NULL;
	const float alpha = 1.0f, beta = 0.0f;
	size_t bytes = (size_t)n * n * 4;
	int st;
	memset(r, 0, sizeof *r);
	if (!use(c, dev, &ctx, r)) return;
	TRY(r, "cuMemAlloc", c->cuMemAlloc(&a, bytes));
	TRY(r, "cuMemAlloc", c->cuMemAlloc(&b, bytes));
	TRY(r, "cuMemAlloc", c->cuMemAlloc(&d, bytes));
	TRY(r, "cuMemsetD32", c->cuMemsetD32(a, 0x3f800000u, bytes / 4)); // 1.0f
	TRY(r, "cuMemsetD32", c->cuMemsetD32(b, 0x3f000000u, bytes / 4)); // 0.5f
	TRY(r, "cuEventCreate", c->cuEventCreate(&e0, 0));
	TRY(r, "cuEventCreate", c->cuEventCreate(&e1, 0));
	if ((st = c->cublasCreate(&h)) != 0) { r->rc = st; r->step = "cublasCreate"; h = NULL; goto out; }
	if (tf32 && (st = c->cublasSetMathMode(h, CUBLAS_TF32_TENSOR_OP_MATH)) != 0) { r->rc = st; r->step = "cublasSetMathMode"; goto out; }
	// One untimed call first: cuBLAS picks and loads its kernel then.
	if ((st = c->cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, (const float *)a, n, (const float *)b, n, &beta, (float *)d, n)) != 0) { r->rc = st; r->step = "cublasSgemm"; goto out; }
	TRY(r, "cuCtxSynchronize", c->cuCtxSynchronize());
	TRY(r, "cuEventRecord", c->cuEventRecord(e0, NULL));
	for (int i = 0; i < iters; i++) {
		if ((st = c->cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, (const float *)a, n, (const float *)b, n, &beta, (float *)d, n)) != 0) { r->rc = st; r->step = "cublasSgemm"; goto out; }
	}
	TRY(r, "cuEventRecord", c->cuEventRecord(e1, NULL));
	TRY(r, "cuEventSynchronize", c->cuEventSynchronize(e1));
	r->ms = elapsed(c, e0, e1);
out:
	if (h) c->cublasDestroy(h);
	if (e0) c->cuEventDestroy(e0);
	if (e1) c->cuEventDestroy(e1);
	if (a) c->cuMemFree(a);
	if (b) c->cuMemFree(b);
	if (d) c->cuMemFree(d);
	c->cuDevicePrimaryCtxRelease(dev);
}

void gl_peer(gl_cuda *c, int dev, int peer, unsigned long long bytes, int iters, gl_result *r) {
	CUcontext ctx = NULL, pctx = NULL;
	CUdeviceptr src = 0, dst = 0;
	CUevent e0 = NULL, e1 = NULL;
	int devHeld = 0, peerHeld = 0;
	CUresult rc;
	memset(r, 0, sizeof *r);
	TRY(r, "cuDeviceCanAccessPeer", c->cuDeviceCanAccessPeer(&r->can_access, dev, peer));
	if (!r->can_access) return;
	if (!use(c, peer, &pctx, r)) return;
	peerHeld = 1;
	TRY(r, "cuMemAlloc", c->cuMemAlloc(&dst, bytes));
	if (!use(c, dev, &ctx, r)) goto out;
	devHeld = 1;
	rc = c->cuCtxEnablePeerAccess(pctx, 0);
	if (rc != 0 && rc != CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) {
		r->rc = rc;
		r->step = "cuCtxEnablePeerAccess";
		goto out;
	}
	TRY(r, "cuMemAlloc", c->cuMemAlloc(&src, bytes));
	TRY(r, "cuMemsetD32", c->cuMemsetD32(src, 0xa5a5a5a5u, bytes / 4));
	TRY(r, "cuEventCreate", c->cuEventCreate(&e0, 0));
	TRY(r, "cuEventCreate", c->cuEventCreate(&e1, 0));
	TRY(r, "cuEventRecord", c->cuEventRecord(e0, NULL));
	for (int i = 0; i < iters; i++) {
		TRY(r, "cuMemcpyPeer", c->cuMemcpyPeer(dst, pctx, src, ctx, bytes));
	}
	TRY(r, "cuEventRecord", c->cuEventRecord(e1, NULL));
	TRY(r, "cuEventSynchronize", c->cuEventSynchronize(e1));
	r->ms = elapsed(c, e0, e1);
	r->bytes = bytes * (unsigned long long)iters;
out:
	if (devHeld) {
		if (e0) c->cuEventDestroy(e0);
		if (e1) c->cuEventDestroy(e1);
		if (src) c->cuMemFree(src);
		c->cuDevicePrimaryCtxRelease(dev);
	}
	if (dst) {
		c->cuCtxSetCurrent(pctx);
		c->cuMemFree(dst);
	}
	if (peerHeld) c->cuDevicePrimaryCtxRelease(peer);
}
