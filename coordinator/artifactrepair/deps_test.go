package artifactrepair_test

import (
	"testing"

	"github.com/gpulayer/gpulayer/internal/archtest"
)

// TestRepairSpeaksNoHTTP: what to check, drop, fetch and copy is decided
// here; httpapi carries the calls between coordinators (Peers).
func TestRepairSpeaksNoHTTP(t *testing.T) {
	archtest.Forbid(t, ".", 4, func(p string) bool { return p == "net/http" || p == "github.com/gpulayer/gpulayer/sdk/api" },
		"artifact repair decides, httpapi carries its calls")
}
