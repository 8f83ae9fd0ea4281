package state_test

import (
	"slices"
	"testing"

	"github.com/gpulayer/gpulayer/internal/archtest"
)

// forbidden are the imports the state machine's own files may not use:
// it holds domain records and returns typed outcomes, the API's views and
// bytes are rendered above it (coordinator/view, httpapi), and it never
// speaks HTTP (decision 11 in DESIGN.md).
var forbidden = []string{
	"github.com/gpulayer/gpulayer/sdk/api",
	"net/http",
}

// TestStateImportsNoWireViews enforces that no non-test file of package
// state imports sdk/api or net/http.
func TestStateImportsNoWireViews(t *testing.T) {
	archtest.Forbid(t, ".", 10, func(p string) bool { return slices.Contains(forbidden, p) },
		"state returns domain records, coordinator/view renders them")
}
