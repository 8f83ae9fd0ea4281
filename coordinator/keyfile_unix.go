//go:build unix

package coordinator

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// openNoFollow opens a secret file for reading, refusing a symbolic link
// in its last component.
func openNoFollow(file string) (*os.File, error) {
	return os.OpenFile(file, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
}

// ownedBySelf refuses a file that another user owns: it could change the
// secret under this process.
func ownedBySelf(fi fs.FileInfo) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if euid := os.Geteuid(); int(st.Uid) != euid {
		return fmt.Errorf("owned by uid %d, not by this process's uid %d", st.Uid, euid)
	}
	return nil
}
