package output_test

import (
	"testing"

	"github.com/gpulayer/gpulayer/internal/archtest"
)

// The output room knows no other room: the state hands it records, and
// coordinator/outputstore implements its contract, never the other way
// round.
func TestOutputImportsNoOtherRoom(t *testing.T) {
	archtest.Isolated(t, ".", 3, "output is the task output's contract; the state and the stores import it",
		"github.com/gpulayer/gpulayer/internal/countw")
}
