package fit_test

import (
	"testing"

	"github.com/gpulayer/gpulayer/internal/archtest"
)

// Placement's rules are pure functions of the state's records: they know
// the records and the state's values, never the store, the scheduler,
// the wire or HTTP, so that the scheduler's match and the state
// machine's re-check apply the very same rules.
func TestFitImportsOnlyRecords(t *testing.T) {
	archtest.Isolated(t, ".", 5, "package fit decides over records; it reads nothing else",
		"github.com/gpulayer/gpulayer/coordinator/command",
		"github.com/gpulayer/gpulayer/coordinator/state/record")
}
