package cow

import (
	"testing"

	"github.com/gpulayer/gpulayer/internal/archtest"
)

// The table room knows no record type and no other room: the state keeps
// its tables in it, never the other way round.
func TestCowImportsNoOtherRoom(t *testing.T) {
	archtest.Isolated(t, ".", 1, "cow is a generic table; the state declares its tables on it")
}
