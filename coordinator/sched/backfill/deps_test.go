package backfill_test

import (
	"testing"

	"github.com/gpulayer/gpulayer/internal/archtest"
)

// Backfill's rules read the records they are given and nothing else.
func TestBackfillImportsOnlyRecords(t *testing.T) {
	archtest.Isolated(t, ".", 4, "package backfill decides over records; it reads nothing else",
		"github.com/gpulayer/gpulayer/coordinator/command",
		"github.com/gpulayer/gpulayer/coordinator/state/record")
}
