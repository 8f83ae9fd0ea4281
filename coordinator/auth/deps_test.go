package auth_test

import (
	"testing"

	"github.com/gpulayer/gpulayer/internal/archtest"
)

// TestAuthSpeaksNoHTTP: who a request acts as is decided here, from the
// header's values and the source address; httpapi is the edge that reads
// them from the request and writes the answer.
func TestAuthSpeaksNoHTTP(t *testing.T) {
	archtest.Forbid(t, ".", 1, func(p string) bool { return p == "net/http" }, "auth decides, httpapi is its edge")
}
