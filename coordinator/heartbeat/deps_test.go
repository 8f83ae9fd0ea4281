package heartbeat_test

import (
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/internal/archtest"
)

// The heartbeat's domain logic speaks neither HTTP nor the wire: httpapi
// decodes and bounds the request, coordinator/view renders the answer.
func TestHeartbeatImportsNoWire(t *testing.T) {
	archtest.Forbid(t, ".", 2, func(p string) bool {
		return p == "net/http" || p == "github.com/gpulayer/gpulayer/sdk/api" || strings.HasSuffix(p, "/httpapi")
	}, "the heartbeat is domain logic; httpapi and coordinator/view are its edge")
}
