//go:build unix

package main

import (
	"io/fs"
	"syscall"
)

// fileOwner returns the uid that owns a file.
func fileOwner(fi fs.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}
