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

// Placement's rules are pure functions of the state's records: its
// subpackages know the records and the state's values, never the store,
// the scheduler, the wire or HTTP, so that the scheduler's match and the
// state machine's re-check of every assignment apply the very same rules.
func TestRulesImportOnlyRecords(t *testing.T) {
	for dir, least := range map[string]int{"fit": 5, "backfill": 4} {
		t.Run(dir, func(t *testing.T) {
			archtest.Isolated(t, dir, least, "package "+dir+" decides over records; it reads nothing else",
				"github.com/gpulayer/gpulayer/coordinator/command",
				"github.com/gpulayer/gpulayer/coordinator/state/record")
		})
	}
}

// Placement's plans decide over a view of the state: records, values,
// the state's sentinel errors, the pending index it reads, a team's
// limits, and the pure rules (fit, backfill), never the store itself, so
// a plan and the state machine's check of it read the same functions.
// Preemption reads place's rules (CanRun, DeviceUse) rather than its own.
func TestPlansReadAView(t *testing.T) {
	for dir, least := range map[string]int{"preemption": 5, "place": 6, "report": 4} {
		t.Run(dir, func(t *testing.T) {
			archtest.Isolated(t, dir, least, "package "+dir+" decides over a View; it reads nothing else of the state",
				"github.com/gpulayer/gpulayer/coordinator/command",
				"github.com/gpulayer/gpulayer/coordinator/sched/backfill",
				"github.com/gpulayer/gpulayer/coordinator/sched/fit",
				"github.com/gpulayer/gpulayer/coordinator/sched/place",
				"github.com/gpulayer/gpulayer/coordinator/state/pending",
				"github.com/gpulayer/gpulayer/coordinator/state/record",
				"github.com/gpulayer/gpulayer/coordinator/state/stateerr",
				"github.com/gpulayer/gpulayer/coordinator/state/teams")
		})
	}
}
