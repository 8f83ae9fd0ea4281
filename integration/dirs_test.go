package integration

import (
	"os"
	"testing"
)

// dirForTasks makes a directory that task users may reach with mode
// (0o755 to read, 0o777 to write), removed when the test ends. It is not
// under t.TempDir, whose parent only the test's own user may enter.
func dirForTasks(t *testing.T, prefix string, mode os.FileMode) string {
	t.Helper()
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, mode); err != nil {
		t.Fatal(err)
	}
	return dir
}
