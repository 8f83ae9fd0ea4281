//go:build unix

package pluginhost

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// checkOwner accepts a file owned by root or by the agent's user.
func checkOwner(fi fs.FileInfo) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if euid := os.Geteuid(); st.Uid != 0 && int(st.Uid) != euid {
		return fmt.Errorf("belongs to uid %d, neither root nor the agent's uid %d", st.Uid, euid)
	}
	return nil
}
