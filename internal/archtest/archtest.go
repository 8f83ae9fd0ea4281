// Package archtest checks architecture rules as tests: which packages a
// package's own (non-test) files may import.
package archtest

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Imports returns, by file name, the imports of the non-test Go files in
// dir. It fails t if dir holds fewer than least such files (a rule read
// from the wrong directory would otherwise pass on nothing).
func Imports(t testing.TB, dir string, least int) map[string][]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, name), nil, parser.ImportsOnly)
		if err != nil {
			t.Fatalf("parse %s: %v", name, err)
		}
		out[name] = []string{}
		for _, spec := range f.Imports {
			p, err := strconv.Unquote(spec.Path.Value)
			if err != nil {
				t.Fatalf("%s: bad import %s", name, spec.Path.Value)
			}
			out[name] = append(out[name], p)
		}
	}
	if len(out) < least {
		t.Fatalf("found only %d Go files in %s, want at least %d; is the test run from its package's directory?", len(out), dir, least)
	}
	return out
}

// Forbid fails t for every import of the package in dir that forbidden
// matches, saying why.
func Forbid(t testing.TB, dir string, least int, forbidden func(path string) bool, why string) {
	t.Helper()
	for name, imports := range Imports(t, dir, least) {
		for _, p := range imports {
			if forbidden(p) {
				t.Errorf("%s imports %q; %s", name, p, why)
			}
		}
	}
}

// Isolated fails t for every import of the package in dir of another of
// the project's packages (but those allowed) or of net/http: a room that
// knows no other room, saying why.
func Isolated(t testing.TB, dir string, least int, why string, allowed ...string) {
	t.Helper()
	Forbid(t, dir, least, func(p string) bool {
		return (strings.HasPrefix(p, "github.com/gpulayer/") && !slices.Contains(allowed, p)) || p == "net/http"
	}, why)
}
