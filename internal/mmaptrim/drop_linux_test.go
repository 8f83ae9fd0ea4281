package mmaptrim

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// A dropped mapping reads back the same data: the pages come back from
// the page cache.
func TestDropKeepsTheData(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	want := make([]byte, 1<<20)
	for i := range want {
		want[i] = byte(i * 7)
	}
	if err := os.WriteFile(path, want, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := unix.Mmap(int(f.Fd()), 0, len(want), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(m)
	sum := func() (s int) {
		for _, b := range m {
			s += int(b)
		}
		return s
	}
	before := sum()
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		t.Fatal(err)
	}
	DropFile(real)
	if after := sum(); after != before || string(m) != string(want) {
		t.Error("mapping reads differently after DropFile")
	}
}
