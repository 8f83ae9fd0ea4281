package cloexec

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// A descriptor inherited without close-on-exec gets it.
func TestMarkSetsCloseOnExec(t *testing.T) {
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// dup2 gives a copy without close-on-exec, as an inherited one is.
	const fd = 101
	if err := unix.Dup2(int(f.Fd()), fd); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if flags, _ := unix.FcntlInt(fd, unix.F_GETFD, 0); flags&unix.FD_CLOEXEC != 0 {
		t.Fatal("dup2 set close-on-exec; the test proves nothing")
	}
	if err := Mark(); err != nil {
		t.Fatal(err)
	}
	if flags, err := unix.FcntlInt(fd, unix.F_GETFD, 0); err != nil || flags&unix.FD_CLOEXEC == 0 {
		t.Errorf("fd %d flags %#x, %v: want close-on-exec", fd, flags, err)
	}
	if flags, _ := unix.FcntlInt(1, unix.F_GETFD, 0); flags&unix.FD_CLOEXEC != 0 {
		t.Error("standard output was made close-on-exec")
	}
}
