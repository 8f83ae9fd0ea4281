package runner

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// errBadAttemptID is returned for an attempt id that is not one plain path
// element and so cannot name a task directory.
var errBadAttemptID = errors.New("attempt id cannot name a task directory")

// makeTaskDir creates the task's own directory, root/<attempt>, mode 0700,
// with tmp/ inside it (TMPDIR), both owned by the task's user when it is
// not the agent's. Mkdir, not MkdirAll: a path that already exists (a
// planted symbolic link, say) is refused rather than followed. Once the
// directory exists it is returned, with any later error, for removal.
func makeTaskDir(root, attempt string, u User) (string, error) {
	if attempt == "" || attempt == "." || attempt == ".." || filepath.Base(attempt) != attempt {
		return "", fmt.Errorf("%w: %q", errBadAttemptID, attempt)
	}
	dir := filepath.Join(root, attempt)
	if err := os.Mkdir(dir, 0o700); err != nil {
		return "", err
	}
	// From here on dir is ours: it is returned with any error, for the
	// caller to remove.
	for _, d := range []string{dir, filepath.Join(dir, "tmp")} {
		if d != dir {
			if err := os.Mkdir(d, 0o700); err != nil {
				return dir, err
			}
		}
		if err := os.Chmod(d, 0o700); err != nil { // whatever the umask
			return dir, err
		}
		if u.Switch {
			if err := os.Lchown(d, int(u.UID), int(u.GID)); err != nil {
				return dir, fmt.Errorf("giving %s to uid %d: %w", d, u.UID, err)
			}
		}
	}
	return dir, nil
}
