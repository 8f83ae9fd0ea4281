package state

import (
	"os"
	"testing"
)

// TestMain runs every test of the package with checkOwnership: each
// command is applied as the first after a capture, so a command that
// changes a task it did not make its own (ownTask), which would change a
// capture, panics.
func TestMain(m *testing.M) {
	checkOwnership = true
	os.Exit(m.Run())
}
