package command_test

import (
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/internal/archtest"
)

// TestCommandsCarryTheirOwnTypes enforces that the replicated vocabulary
// is the state's own: no non-test file of package command imports the
// wire's types (coordinator/translate converts between them) or HTTP.
func TestCommandsCarryTheirOwnTypes(t *testing.T) {
	archtest.Forbid(t, ".", 10, func(p string) bool {
		return strings.HasPrefix(p, "github.com/gpulayer/gpulayer/sdk/") || p == "net/http"
	}, "a change to the wire must not be a change to the replicated state")
}
