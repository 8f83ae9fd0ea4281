package mmaptrim

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/gpulayer/gpulayer/internal/smaps"
)

// DropFile takes the mapping's pages out of resident memory (smaps'
// Rss for the file falls), and the mapping reads back the same data: the
// pages come back from the page cache.
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
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		t.Fatal(err)
	}
	// rss is how much of the file the mapping holds resident.
	rss := func() int64 {
		t.Helper()
		files, err := smaps.FileRSS(os.Getpid())
		if err != nil {
			t.Fatal(err)
		}
		return files[real]
	}
	before := sum() // every page touched: all of them mapped in
	if n := rss(); n < int64(len(want))/2 {
		t.Fatalf("after reading every page the mapping holds %d bytes resident, want about %d", n, len(want))
	}
	DropFile(real)
	if n := rss(); n > int64(len(want))/8 {
		t.Errorf("after DropFile the mapping still holds %d of %d bytes resident", n, len(want))
	}
	if after := sum(); after != before || string(m) != string(want) {
		t.Error("mapping reads differently after DropFile")
	}
}
