// A stand-in for libcuda.so.1 and libcublas.so for tests on machines with
// no GPU: it exports the entry points the preflight loads, keeps "device"
// memory in host memory, and keeps time on a virtual clock that each
// operation moves on by what it would take at the configured speed, so
// CUDA events measure the configured figures exactly. Its behaviour is
// read from the environment at each call:
//
//   FAKECUDA_UUIDS      comma-separated GPU UUIDs (GPU-8-4-4-4-12 hex), one a device
//   FAKECUDA_FREE_MIB   free memory each device reports (default 64)
//   FAKECUDA_MEM_GBPS   memset and copy-back speed, GB/s (default 2000)
//   FAKECUDA_TFLOPS     SGEMM speed, TFLOP/s (default 400)
//   FAKECUDA_PEER_GBPS  peer copy speed, GB/s (default 300)
//   FAKECUDA_CORRUPT    "ordinal:offset": that device reads back one bad byte there
//   FAKECUDA_NOPEER     set: no device can reach another
//   FAKECUDA_HANG_MS    every event synchronize really sleeps this long
//
// Built by the tests with the system's cc; never part of the agent.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int CUresult;

static double now_ms;   // the virtual clock
static int current = -1; // the current context's device

static double envf(const char *k, double def) {
	const char *v = getenv(k);
	return v && *v ? atof(v) : def;
}

static int count(void) {
	const char *v = getenv("FAKECUDA_UUIDS");
	if (v == NULL || *v == 0) return 0;
	int n = 1;
	for (; *v; v++) n += *v == ',';
	return n;
}

static int hexval(char ch) {
	if (ch >= '0' && ch <= '9') return ch - '0';
	if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
	return -1;
}

CUresult cuInit(unsigned flags) { (void)flags; return 0; }
CUresult cuDeviceGetCount(int *n) { *n = count(); return 0; }
CUresult cuDeviceGet(int *d, int i) { if (i < 0 || i >= count()) return 101; *d = i; return 0; }

CUresult cuDeviceGetUuid(unsigned char *out, int dev) {
	const char *v = getenv("FAKECUDA_UUIDS");
	if (v == NULL || dev < 0 || dev >= count()) return 101;
	for (int i = 0; i < dev; i++) v = strchr(v, ',') + 1;
	if (strncmp(v, "GPU-", 4) == 0) v += 4;
	int k = 0;
	for (; *v && *v != ',' && k < 32; v++) {
		int h = hexval(*v);
		if (h < 0) continue; // a dash
		if (k % 2 == 0) out[k / 2] = (unsigned char)(h << 4);
		else out[k / 2] |= (unsigned char)h;
		k++;
	}
	return k == 32 ? 0 : 1;
}

CUresult cuDevicePrimaryCtxRetain(void **ctx, int dev) { *ctx = (void *)(long)(dev + 1); return 0; }
CUresult cuDevicePrimaryCtxRelease_v2(int dev) { (void)dev; return 0; }
CUresult cuCtxSetCurrent(void *ctx) { current = (int)(long)ctx - 1; return 0; }
CUresult cuCtxSynchronize(void) { return 0; }

CUresult cuMemGetInfo_v2(size_t *fr, size_t *total) {
	*fr = (size_t)envf("FAKECUDA_FREE_MIB", 64) << 20;
	*total = *fr * 2;
	return 0;
}

CUresult cuMemAlloc_v2(unsigned long long *p, size_t n) {
	void *m = malloc(n);
	if (m == NULL) return 2;
	*p = (unsigned long long)m;
	return 0;
}

CUresult cuMemFree_v2(unsigned long long p) { free((void *)p); return 0; }

static void advance(double bytes_or_flops, double per_s) { now_ms += bytes_or_flops / per_s * 1e3; }

CUresult cuMemsetD32_v2(unsigned long long p, unsigned int v, size_t n) {
	unsigned int *w = (unsigned int *)p;
	for (size_t i = 0; i < n; i++) w[i] = v;
	advance((double)n * 4, envf("FAKECUDA_MEM_GBPS", 2000) * 1e9);
	return 0;
}

CUresult cuMemcpyDtoH_v2(void *dst, unsigned long long src, size_t n) {
	memcpy(dst, (void *)src, n);
	advance((double)n, envf("FAKECUDA_MEM_GBPS", 2000) * 1e9);
	// A corrupt device flips one byte of what it reads back.
	const char *c = getenv("FAKECUDA_CORRUPT");
	int dev;
	unsigned long long off;
	if (c && sscanf(c, "%d:%llu", &dev, &off) == 2 && dev == current && off < n) {
		((unsigned char *)dst)[off] ^= 0x10;
	}
	return 0;
}

CUresult cuMemcpyPeer(unsigned long long dst, void *dctx, unsigned long long src, void *sctx, size_t n) {
	(void)dctx; (void)sctx;
	memcpy((void *)dst, (void *)src, n);
	advance((double)n, envf("FAKECUDA_PEER_GBPS", 300) * 1e9);
	return 0;
}

CUresult cuDeviceCanAccessPeer(int *can, int dev, int peer) {
	*can = getenv("FAKECUDA_NOPEER") == NULL && dev != peer;
	return 0;
}

CUresult cuCtxEnablePeerAccess(void *ctx, unsigned flags) { (void)ctx; (void)flags; return 0; }

typedef struct { double t; } event;

CUresult cuEventCreate(void **e, unsigned flags) { (void)flags; *e = calloc(1, sizeof(event)); return *e ? 0 : 2; }
CUresult cuEventRecord(void *e, void *stream) { (void)stream; ((event *)e)->t = now_ms; return 0; }
CUresult cuEventDestroy_v2(void *e) { free(e); return 0; }
CUresult cuEventElapsedTime(float *ms, void *a, void *b) { *ms = (float)(((event *)b)->t - ((event *)a)->t); return 0; }

CUresult cuEventSynchronize(void *e) {
	(void)e;
	double hang = envf("FAKECUDA_HANG_MS", 0);
	if (hang > 0) {
		struct timespec ts = {(time_t)(hang / 1000), (long)((long long)hang % 1000) * 1000000L};
		nanosleep(&ts, NULL);
	}
	return 0;
}

int cublasCreate_v2(void **h) { *h = malloc(1); return *h ? 0 : 1; }
int cublasDestroy_v2(void *h) { free(h); return 0; }
int cublasSetMathMode(void *h, int mode) { (void)h; (void)mode; return 0; }

int cublasSgemm_v2(void *h, int ta, int tb, int m, int n, int k, const float *alpha, const float *a, int lda,
                   const float *b, int ldb, const float *beta, float *c, int ldc) {
	(void)h; (void)ta; (void)tb; (void)alpha; (void)a; (void)lda; (void)b; (void)ldb; (void)beta; (void)c; (void)ldc;
	advance(2.0 * m * n * k, envf("FAKECUDA_TFLOPS", 400) * 1e12);
	return 0;
}
