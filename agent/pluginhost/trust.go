package pluginhost

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// ErrPluginUntrusted is returned by Get for a plugin-directory executable
// the host refuses to run: a symbolic link, not a regular file, owned by
// someone other than root or the agent's user, writable by group or
// others, or not matching its pinned SHA-256. Names leaves such files
// out and logs why.
var ErrPluginUntrusted = errors.New("pluginhost: plugin refused")

// checkTrusted says why fi (from Lstat) may not be run as a plugin, or
// returns nil. A file anyone but root or the agent's user could have
// written, or could still rewrite, is not run by an agent that may be
// root.
func checkTrusted(fi fs.FileInfo) error {
	if err := checkFile(fi); err != nil {
		return err
	}
	if fi.Mode().Perm()&0o111 == 0 {
		return errors.New("is not executable")
	}
	return nil
}

// checkFile applies the rules every file the host trusts follows (a
// plugin, the pins file): a regular file, not a symbolic link, owned by
// root or the agent's user, not writable by group or others.
func checkFile(fi fs.FileInfo) error {
	mode := fi.Mode()
	switch {
	case mode&fs.ModeSymlink != 0:
		return errors.New("is a symbolic link")
	case !mode.IsRegular():
		return errors.New("is not a regular file")
	case mode.Perm()&0o022 != 0:
		return fmt.Errorf("is writable by group or others (mode %04o)", mode.Perm())
	}
	return checkOwner(fi)
}

// checkDir says why the plugin directory itself may not be trusted: a
// directory others may write to lets them replace any plugin in it.
func checkDir(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	switch {
	case !fi.IsDir():
		return errors.New("is not a directory")
	case fi.Mode().Perm()&0o022 != 0:
		return fmt.Errorf("is writable by group or others (mode %04o)", fi.Mode().Perm())
	}
	return checkOwner(fi)
}
