package executor_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/gpulayer/gpulayer"

// sdkAllowed are the import path roots sdk/ may use besides the standard
// library and sdk/ itself (decision 10 in DESIGN.md). What these pull in
// is theirs to choose.
var sdkAllowed = []string{
	"github.com/hashicorp/go-plugin",
	"google.golang.org/grpc",
	"google.golang.org/protobuf",
}

// TestSDKDependencies enforces that every Go file under sdk/ imports only
// the standard library, other sdk/ packages, go-plugin, grpc and protobuf,
// and that sdk/api imports only the standard library.
func TestSDKDependencies(t *testing.T) {
	root := filepath.Join("..") // sdk/
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		files++
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		pkgDir := filepath.ToSlash(filepath.Dir(rel))
		for _, imp := range fileImports(t, path) {
			if reason := refuse(pkgDir, imp); reason != "" {
				t.Errorf("sdk/%s imports %q: %s", filepath.ToSlash(rel), imp, reason)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 5 {
		t.Fatalf("found only %d Go files under sdk/; is the walk rooted right?", files)
	}
}

func fileImports(t *testing.T, path string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
	if err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	var out []string
	for _, spec := range f.Imports {
		p, err := strconv.Unquote(spec.Path.Value)
		if err != nil {
			t.Fatalf("%s: bad import %s", path, spec.Path.Value)
		}
		out = append(out, p)
	}
	return out
}

// clientAllowed are the import path roots that sdk/client and
// sdk/execstream (the client side, never imported by a plugin through
// sdk/executor) may use besides sdkAllowed: the WebSocket library of exec
// sessions, which has no dependencies of its own.
var clientAllowed = []string{"github.com/coder/websocket"}

// refuse says why package sdk/<pkgDir> may not import imp, or "" if it may.
func refuse(pkgDir, imp string) string {
	if isStandard(imp) {
		return ""
	}
	if pkgDir == "client" || pkgDir == "execstream" {
		for _, root := range clientAllowed {
			if imp == root || strings.HasPrefix(imp, root+"/") {
				return ""
			}
		}
	}
	if pkgDir == "api" || strings.HasPrefix(pkgDir, "api/") {
		return "sdk/api must depend on the standard library only"
	}
	if imp == module+"/sdk" || strings.HasPrefix(imp, module+"/sdk/") {
		return ""
	}
	for _, root := range sdkAllowed {
		if imp == root || strings.HasPrefix(imp, root+"/") {
			return ""
		}
	}
	return "sdk/ may depend only on the standard library, go-plugin, grpc and protobuf"
}

// isStandard reports whether imp is a standard library path: its first
// element has no dot.
func isStandard(imp string) bool {
	first, _, _ := strings.Cut(imp, "/")
	return !strings.Contains(first, ".")
}

func TestRefuse(t *testing.T) {
	for _, tc := range []struct {
		dir, imp string
		ok       bool
	}{
		{"executor", "context", true},
		{"executor", "google.golang.org/grpc/status", true},
		{"executor", "github.com/hashicorp/go-plugin", true},
		{"executor", "github.com/hashicorp/go-pluginx", false},
		{"executor", "github.com/hashicorp/go-hclog", false},
		{"execstream", "github.com/coder/websocket/wsjson", true},
		{"client", "github.com/coder/websocket", true},
		{"executor", "github.com/coder/websocket", false},
		{"api", "github.com/coder/websocket", false},
		{"executor", module + "/sdk/api", true},
		{"executor", module + "/agent/runner", false},
		{"executor", module + "/sdkx", false},
		{"api", "net/http", true},
		{"api", "google.golang.org/protobuf/proto", false},
		{"api", module + "/sdk/executor", false},
	} {
		if got := refuse(tc.dir, tc.imp) == ""; got != tc.ok {
			t.Errorf("refuse(%q, %q) allowed=%v, want %v", tc.dir, tc.imp, got, tc.ok)
		}
	}
}
