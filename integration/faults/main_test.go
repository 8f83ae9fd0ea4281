package faults

import (
	"os"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
)

// TestMain lets the test binary serve as a coordinator process: the
// campaign runs each coordinator in one (see coordinatortest.Options.
// Processes).
func TestMain(m *testing.M) {
	coordinatortest.ServeChild()
	os.Exit(m.Run())
}
