package integration

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// hostPID finds, in the host's /proc, the process whose command line
// holds args in a row: a sandboxed task runs in a PID namespace of its
// own, so the pid it reports ($$) is the namespace's, while NVML and the
// agent's GPU watchdog see the host's.
func hostPID(t *testing.T, args ...string) uint32 {
	t.Helper()
	want := []byte("\x00" + string(bytes.Join(bytesOf(args), []byte{0})) + "\x00")
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		pid, err := strconv.ParseUint(e.Name(), 10, 32)
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(cmdline, want) {
			return uint32(pid)
		}
	}
	t.Fatalf("no process runs with %q", args)
	return 0
}

func bytesOf(ss []string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}
