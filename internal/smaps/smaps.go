// Package smaps reads how much of each mapped file a process holds
// resident, from /proc/PID/smaps (Linux). File-backed pages count in a
// process's VmRSS although they are page cache the kernel may take back;
// this tells them apart by file.
package smaps

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// FileRSS sums, per mapped file (by the path smaps gives), the resident
// memory of pid's mappings of it.
func FileRSS(pid int) (map[string]int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps", pid))
	if err != nil {
		return nil, err
	}
	return parse(string(b)), nil
}

func parse(smaps string) map[string]int64 {
	out := map[string]int64{}
	file := ""
	for line := range strings.SplitSeq(smaps, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 5 && strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":"):
			// A mapping's header: range perms offset dev inode [path].
			file = ""
			if len(f) >= 6 && strings.HasPrefix(f[5], "/") {
				file = f[5]
			}
		case len(f) >= 2 && f[0] == "Rss:" && file != "":
			n, _ := strconv.ParseInt(f[1], 10, 64)
			out[file] += n << 10
		}
	}
	return out
}
