package state_test

import (
	"go/parser"
	"go/token"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
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
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	files := 0
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		files++
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatalf("parse %s: %v", name, err)
		}
		for _, spec := range f.Imports {
			p, err := strconv.Unquote(spec.Path.Value)
			if err != nil {
				t.Fatalf("%s: bad import %s", name, spec.Path.Value)
			}
			if slices.Contains(forbidden, p) {
				t.Errorf("%s imports %q; state returns domain records, coordinator/view renders them", name, p)
			}
		}
	}
	if files < 10 {
		t.Fatalf("found only %d Go files in coordinator/state; is the test run from its directory?", files)
	}
}
