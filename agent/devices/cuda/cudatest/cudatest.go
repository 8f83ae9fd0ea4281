// Package cudatest builds the stand-in CUDA library (testdata/fakecuda.c: the
// driver API and cuBLAS entry points the preflight loads, on host memory
// and a virtual clock) for tests on machines with no GPU. Its behaviour is
// set through the FAKECUDA_* environment variables fakecuda.c lists; the
// agent never loads it.
package cudatest

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Build compiles the stand-in library with the C compiler cgo uses ($CC,
// else cc) into a directory of t's, and makes it serve GPUs uuids; it
// returns the library's path, to pass to cuda.Open as both libraries.
func Build(t testing.TB, uuids ...string) string {
	t.Helper()
	_, here, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot find fakecuda.c")
	}
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "cc"
	}
	so := filepath.Join(t.TempDir(), "libfakecuda.so")
	src := filepath.Join(filepath.Dir(here), "testdata", "fakecuda.c")
	if out, err := exec.Command(cc, "-shared", "-fPIC", "-O2", "-o", so, src).CombinedOutput(); err != nil {
		t.Fatalf("building the stand-in CUDA library: %v\n%s", err, out)
	}
	t.Setenv("FAKECUDA_UUIDS", strings.Join(uuids, ","))
	return so
}
