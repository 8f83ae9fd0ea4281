package output_test

import (
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/internal/archtest"
)

// The output room knows no other room: the state hands it records, and
// coordinator/outputstore implements its contract, never the other way
// round.
func TestOutputImportsNoOtherRoom(t *testing.T) {
	archtest.Forbid(t, ".", 3, func(p string) bool {
		return (strings.HasPrefix(p, "github.com/gpulayer/") && p != "github.com/gpulayer/gpulayer/internal/countw") || p == "net/http"
	}, "output is the task output's contract; the state and the stores import it")
}
