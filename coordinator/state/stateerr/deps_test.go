package stateerr_test

import (
	"testing"

	"github.com/gpulayer/gpulayer/internal/archtest"
)

// Every room may return the state's errors, so they import no room.
func TestErrorsImportNoRoom(t *testing.T) {
	archtest.Isolated(t, ".", 1, "stateerr sits below every room of the state")
}
