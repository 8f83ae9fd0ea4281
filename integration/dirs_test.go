package integration

import (
	"os"
	"path/filepath"
	"testing"
)

// dirForTasks makes a directory that task users may reach with mode
// (0o755 to read, 0o777 to write), removed when the test ends. It is not
// under t.TempDir, whose parent only the test's own user may enter, but
// under taskShareRoot.
func dirForTasks(t *testing.T, prefix string, mode os.FileMode) string {
	t.Helper()
	dir, err := os.MkdirTemp(taskShareRoot(t), prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, mode); err != nil {
		t.Fatal(err)
	}
	return dir
}

// taskShareRoot is where dirForTasks makes its directories: under the
// host's /tmp, which a sandboxed task does not see (it has a /tmp of its
// own), so every agent startAgent starts keeps it reachable
// (TaskSandbox.Keep).
func taskShareRoot(t *testing.T) string {
	t.Helper()
	root := filepath.Join(os.TempDir(), "gpulayer-integration-shared")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(root, 0o755); err != nil { // task uids pass through
		t.Fatal(err)
	}
	return root
}
