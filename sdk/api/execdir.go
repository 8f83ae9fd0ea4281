package api

import (
	"errors"
	"path"
	"strings"
)

// ErrExecDirOutside is returned by CheckExecDir for an exec config dir
// that would leave the task's directory.
var ErrExecDirOutside = errors.New("must be a relative path that stays inside the task's directory")

// CheckExecDir checks the exec executor's config.dir: empty (the task's
// directory itself) or a relative, slash-separated path that stays inside
// the task's directory once cleaned. An absolute path, a NUL byte, or any
// ".." that climbs above the task's directory ("..", "../x", "a/../../b")
// is refused. "a/../b" is accepted: it names b inside the task directory.
//
// The coordinator applies it at submit (invalid_argument naming
// config.dir) and the exec executor again before it starts a task, where
// it also resolves symbolic links.
func CheckExecDir(dir string) error {
	if dir == "" {
		return nil
	}
	if strings.ContainsRune(dir, 0) || strings.HasPrefix(dir, "/") || strings.HasPrefix(dir, `\`) {
		return ErrExecDirOutside
	}
	clean := path.Clean(dir)
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return ErrExecDirOutside
	}
	return nil
}
