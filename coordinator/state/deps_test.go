package state_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/internal/archtest"
)

// forbidden are the imports the state machine's own files may not use:
// it holds domain records and returns typed outcomes, the API's views and
// bytes are rendered above it (coordinator/view, httpapi), and it never
// speaks HTTP (decision 11 in DESIGN.md).
var forbidden = []string{
	"github.com/gpulayer/gpulayer/sdk/api",
	"net/http",
}

// TestStateImportsNoWireViews enforces that no non-test file of package
// state imports sdk/api or net/http.
func TestStateImportsNoWireViews(t *testing.T) {
	archtest.Forbid(t, ".", 10, func(p string) bool { return slices.Contains(forbidden, p) },
		"state returns domain records, coordinator/view renders them")
}

// rooms are the state's rooms (docs/architecture.md) and what each may
// import of the project's packages besides nothing: a room knows no other
// room, only the state's value types (command), its sentinel errors
// (stateerr) and an internal helper, so that the state declares its
// tables on the rooms and never the other way round.
var rooms = map[string][]string{
	"artifacts": {command, stateerr},
	"audit":     {command, stateerr},
	"cow":       nil,
	"deps":      {command, stateerr, state + "/record"},
	"creds":     {command, stateerr},
	"enroll":    {stateerr},
	// Placement's derived indexes: views place builds, bases place keeps.
	"derived":  {state + "/record", "github.com/gpulayer/gpulayer/coordinator/sched/place", "github.com/gpulayer/gpulayer/coordinator/sched/backfill"},
	"fleetctl": {command, stateerr, state + "/record"},
	"groups":   {command, stateerr},
	// The GPU operations read a device as placement does (approval,
	// identity, MIG holds): package fit's rules, pure over records.
	"gpuops":     {command, stateerr, state + "/record", "github.com/gpulayer/gpulayer/coordinator/sched/fit"},
	"jobhistory": {command, state + "/record"},
	"mprecord":   nil,
	"output":     {"github.com/gpulayer/gpulayer/internal/countw"},
	"pending":    {command, state + "/record"},
	"record":     {command},
	// The codec writes every table, so it knows each table's room; no
	// room knows it, and it knows nothing of the store.
	"snapcodec": {command, stateerr, state + "/record", state + "/mprecord", state + "/cow", state + "/creds",
		state + "/groups", state + "/teams", state + "/usage", state + "/enroll", state + "/artifacts"},
	"stateerr": nil,
	"teams":    {command, stateerr},
	"usage":    {stateerr},
}

const (
	command  = "github.com/gpulayer/gpulayer/coordinator/command"
	state    = "github.com/gpulayer/gpulayer/coordinator/state"
	stateerr = state + "/stateerr"
)

// TestRoomsImportNoOtherRoom holds every room to its list, and finds no
// package below state that the list forgets.
func TestRoomsImportNoOtherRoom(t *testing.T) {
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if _, listed := rooms[e.Name()]; e.IsDir() && !listed && hasGo(t, e.Name()) {
			t.Errorf("package state/%s is not listed among the rooms", e.Name())
		}
	}
	for room, allowed := range rooms {
		t.Run(room, func(t *testing.T) {
			archtest.Isolated(t, room, 1, "state/"+room+" is a room of the state's; the state imports it, never the other way round", allowed...)
		})
	}
}

// hasGo reports whether dir holds a non-test Go file.
func hasGo(t *testing.T, dir string) bool {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range m {
		if !strings.HasSuffix(f, "_test.go") {
			return true
		}
	}
	return false
}
