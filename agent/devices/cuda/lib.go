//go:build cgo && linux

package cuda

/*
#cgo LDFLAGS: -ldl
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// Lib is a loaded CUDA driver and, where found, cuBLAS.
type Lib struct {
	c *C.gl_cuda
	// busy is held while CUDA calls run: a check whose calls outlive
	// the bound keeps it until they return, and later checks wait for it
	// only as long as their context allows.
	busy chan struct{}
}

// systemCUDA and systemCUBLAS are the names loaded by OpenSystem: the
// driver's ABI name, and cuBLAS by its major versions, newest first.
var (
	systemCUDA   = "libcuda.so.1"
	systemCUBLAS = []string{"libcublas.so.13", "libcublas.so.12", "libcublas.so.11", "libcublas.so"}
)

// OpenSystem loads the system's CUDA driver and the first cuBLAS that
// loads (none: the matmul check is skipped).
func OpenSystem() (*Lib, error) {
	l, err := Open(systemCUDA, "")
	if err != nil {
		return nil, err
	}
	for _, b := range systemCUBLAS {
		if l.loadCUBLAS(b) == nil {
			break
		}
	}
	return l, nil
}

// Open loads the CUDA driver API from cudaPath and initialises the
// driver, and loads cuBLAS from cublasPath unless it is empty. Tests pass
// the stand-in library's path.
func Open(cudaPath, cublasPath string) (*Lib, error) {
	cp := C.CString(cudaPath)
	defer C.free(unsafe.Pointer(cp))
	var buf [256]C.char
	c := C.gl_open(cp, &buf[0], C.size_t(len(buf)))
	if c == nil {
		return nil, fmt.Errorf("%w: %s", ErrUnavailable, C.GoString(&buf[0]))
	}
	l := &Lib{c: c, busy: make(chan struct{}, 1)}
	if cublasPath != "" {
		if err := l.loadCUBLAS(cublasPath); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// loadCUBLAS loads cuBLAS from path for the matmul check.
func (l *Lib) loadCUBLAS(path string) error {
	bp := C.CString(path)
	defer C.free(unsafe.Pointer(bp))
	var buf [256]C.char
	if C.gl_load_cublas(l.c, bp, &buf[0], C.size_t(len(buf))) == 0 {
		return fmt.Errorf("%w: cuBLAS: %s", ErrUnavailable, C.GoString(&buf[0]))
	}
	return nil
}

// HasCUBLAS says whether the matmul check can run.
func (l *Lib) HasCUBLAS() bool { return C.gl_has_cublas(l.c) != 0 }

// device finds the CUDA ordinal of the GPU NVML names uuid.
func (l *Lib) device(uuid string) (int, error) {
	u, err := parseUUID(uuid)
	if err != nil {
		return 0, err
	}
	d := int(C.gl_find(l.c, (*C.uchar)(unsafe.Pointer(&u[0]))))
	switch {
	case d < -1:
		return 0, fmt.Errorf("cuDeviceGetCount: CUDA error %d", -1-d)
	case d < 0:
		return 0, fmt.Errorf("%w: %s (CUDA_VISIBLE_DEVICES of the agent?)", errNotVisible, uuid)
	}
	return d, nil
}

// result is a C outcome read into Go.
type result struct {
	err               error
	ms, ms2           float64
	bytes, mismatches uint64
	firstBad          uint64
	want, got         uint32
	canAccess         bool
}

func fromC(r *C.gl_result) result {
	out := result{
		ms: float64(r.ms), ms2: float64(r.ms2), bytes: uint64(r.bytes),
		mismatches: uint64(r.mismatches), firstBad: uint64(r.first_bad),
		want: uint32(r.want), got: uint32(r.got), canAccess: r.can_access != 0,
	}
	if r.rc != 0 {
		out.err = fmt.Errorf("%s: CUDA error %d", C.GoString(r.step), int(r.rc))
	}
	return out
}

func (l *Lib) memFree(dev int) (uint64, error) {
	var fr C.ulonglong
	var r C.gl_result
	C.gl_mem_free(l.c, C.int(dev), &fr, &r)
	if res := fromC(&r); res.err != nil {
		return 0, res.err
	}
	return uint64(fr), nil
}

func (l *Lib) pattern(dev int, bytes uint64) result {
	var r C.gl_result
	C.gl_pattern(l.c, C.int(dev), C.ulonglong(bytes), &r)
	return fromC(&r)
}

func (l *Lib) gemm(dev, n, iters int) result {
	var r C.gl_result
	C.gl_gemm(l.c, C.int(dev), C.int(n), C.int(iters), 1, &r)
	return fromC(&r)
}

func (l *Lib) peer(dev, peer int, bytes uint64, iters int) result {
	var r C.gl_result
	C.gl_peer(l.c, C.int(dev), C.int(peer), C.ulonglong(bytes), C.int(iters), &r)
	return fromC(&r)
}
