package sched_test

import (
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/internal/archtest"
)

// Placement speaks no HTTP: httpapi calls the scheduler, never the other
// way round.
func TestSchedImportsNoHTTP(t *testing.T) {
	archtest.Forbid(t, ".", 1, func(p string) bool {
		return p == "net/http" || strings.HasSuffix(p, "/httpapi")
	}, "the scheduler places tasks; HTTP is httpapi's")
}
