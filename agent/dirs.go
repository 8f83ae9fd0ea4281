package agent

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// errUnsafeDir is wrapped by the errors of a data or work dir the agent
// will not use.
var errUnsafeDir = errors.New("agent: unsafe directory")

// secureDataDir makes the data dir 0700 and the credential file in it
// 0600, whatever modes they had: tasks, which run as other users, must not
// read the worker credential. A symbolic link as the data dir is
// followed only if the operator gave one; the dir itself must belong to
// the agent's user.
func secureDataDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("agent: data dir: %w", err)
	}
	if err := ownDir(dir); err != nil {
		return err
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return fmt.Errorf("agent: data dir: %w", err)
	}
	for _, name := range []string{CredentialFile, CredentialFile + ".tmp"} {
		err := os.Chmod(filepath.Join(dir, name), 0o600)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("agent: worker credential: %w", err)
		}
	}
	return nil
}

// ownDir checks that dir is a directory owned by the agent's user.
func ownDir(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%w: %s is not a directory", errUnsafeDir, dir)
	}
	if uid, ok := ownerOf(fi); ok && uid != os.Geteuid() {
		return fmt.Errorf("%w: %s belongs to uid %d, not to the agent's uid %d", errUnsafeDir, dir, uid, os.Geteuid())
	}
	return nil
}

// prepareWorkRoot returns the directory task directories are made in, and
// what to run when the agent stops. Empty dir means a fresh directory
// under os.TempDir(), removed at the end. The root is 0711 when tasks
// switch users (they may enter their own directory, not list others) and
// 0700 otherwise; with switching every directory above it must be
// searchable by others, or no task could reach its directory.
func prepareWorkRoot(dir string, switching bool) (string, func(), error) {
	mode := os.FileMode(0o700)
	if switching {
		mode = 0o711
	}
	cleanup := func() {}
	if dir == "" {
		d, err := os.MkdirTemp("", "gpulayer-tasks-")
		if err != nil {
			return "", nil, fmt.Errorf("agent: work dir: %w", err)
		}
		dir, cleanup = d, func() { _ = os.RemoveAll(d) }
	} else if err := os.MkdirAll(dir, mode); err != nil {
		return "", nil, fmt.Errorf("agent: work dir: %w", err)
	}
	fail := func(err error) (string, func(), error) {
		cleanup()
		return "", nil, err
	}
	abs, err := filepath.Abs(dir)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return fail(fmt.Errorf("agent: work dir: %w", err))
	}
	if err := ownDir(abs); err != nil {
		return fail(err)
	}
	if err := os.Chmod(abs, mode); err != nil {
		return fail(fmt.Errorf("agent: work dir: %w", err))
	}
	if switching {
		for p := filepath.Dir(abs); ; p = filepath.Dir(p) {
			fi, err := os.Stat(p)
			if err != nil {
				return fail(fmt.Errorf("agent: work dir: %w", err))
			}
			if fi.Mode().Perm()&0o001 == 0 {
				return fail(fmt.Errorf("%w: task users cannot reach the work dir %s: %s is mode %04o and others may not search it (o+x); choose another --work-dir", errUnsafeDir, abs, p, fi.Mode().Perm()))
			}
			if p == filepath.Dir(p) {
				break
			}
		}
	}
	return abs, cleanup, nil
}
