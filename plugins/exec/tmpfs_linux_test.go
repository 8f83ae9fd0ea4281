package exec

import "testing"

// Each fresh tmpfs is as big as the smaller of the executor's TmpfsBytes
// and the task's memory limit, where either is set; else an eighth of
// the host's RAM (in whole MiB, at least minFreshBytes), or 1 GiB where
// the host's RAM is not known.
func TestFreshTmpfsBytes(t *testing.T) {
	const gib = 1 << 30
	for _, tc := range []struct {
		name                        string
		configured, memory, hostRAM int64
		want                        int64
	}{
		{"configured", 4 << 20, 0, 64 * gib, 4 << 20},
		{"memory limit", 0, 2 * gib, 64 * gib, 2 * gib},
		{"memory limit above the configured bound", 4 << 20, 2 * gib, 64 * gib, 4 << 20},
		{"configured bound above the memory limit", 4 * gib, 2 * gib, 64 * gib, 2 * gib},
		{"an eighth of the host's RAM", 0, 0, 64 * gib, 8 * gib},
		{"rounded down to a MiB", 0, 0, 8*(100<<20) + 8*12345, 100 << 20},
		{"a small host", 0, 0, 64 << 20, minFreshBytes},
		{"RAM unknown", 0, 0, 0, gib},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := freshTmpfsBytes(tc.configured, tc.memory, func() int64 { return tc.hostRAM }); got != tc.want {
				t.Fatalf("freshTmpfsBytes = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestFreshTmpfsOptions(t *testing.T) {
	for _, tc := range []struct {
		size int64
		want string
	}{
		{0, "mode=1777"},
		{1 << 20, "mode=1777,size=1048576,nr_inodes=4096"},
		{1 << 30, "mode=1777,size=1073741824,nr_inodes=262144"},
	} {
		if got := freshTmpfsOptions(tc.size); got != tc.want {
			t.Errorf("freshTmpfsOptions(%d) = %q, want %q", tc.size, got, tc.want)
		}
	}
}
