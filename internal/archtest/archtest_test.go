package archtest

import (
	"slices"
	"testing"
)

// The rule reads this package's own imports, and a fake testing.TB shows
// that a forbidden one fails the test.
func TestForbidCatchesAnImport(t *testing.T) {
	imports := Imports(t, ".", 1)
	if !slices.Contains(imports["archtest.go"], "go/parser") {
		t.Fatalf("imports read: %v", imports)
	}
	rec := &recorder{TB: t}
	Forbid(rec, ".", 1, func(p string) bool { return p == "go/parser" }, "a test of the rule")
	if rec.errors != 1 {
		t.Fatalf("%d errors reported, want 1", rec.errors)
	}
}

// Isolated refuses the project's other packages and net/http, but the
// ones allowed.
func TestIsolatedCatchesOtherRooms(t *testing.T) {
	for _, c := range []struct {
		allowed []string
		want    int
	}{
		{nil, 2},
		{[]string{"github.com/gpulayer/gpulayer/internal/countw"}, 1},
	} {
		rec := &recorder{TB: t}
		Isolated(rec, "testdata/room", 1, "a test of the rule", c.allowed...)
		if rec.errors != c.want {
			t.Fatalf("allowed %v: %d errors reported, want %d", c.allowed, rec.errors, c.want)
		}
	}
}

type recorder struct {
	testing.TB
	errors int
}

func (r *recorder) Errorf(string, ...any) { r.errors++ }
