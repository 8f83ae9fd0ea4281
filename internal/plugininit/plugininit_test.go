package plugininit

import (
	"bytes"
	"errors"
	"go/format"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestValidateName(t *testing.T) {
	cases := []struct {
		name string
		ok   bool
	}{
		{"demo", true},
		{"demo-exec", true},
		{"slurm_step2", true},
		{"9lives", true},
		{strings.Repeat("a", 64), true},
		{"", false},
		{"Demo", false},
		{"-demo", false},
		{"_demo", false},
		{"demo exec", false},
		{"demo/exec", false},
		{"../evil", false},
		{"démo", false},
		{strings.Repeat("a", 65), false},
	}
	for _, tc := range cases {
		err := ValidateName(tc.name)
		if tc.ok != (err == nil) || (err != nil && !errors.Is(err, ErrInvalidName)) {
			t.Errorf("ValidateName(%q) = %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
}

// Write refuses what it cannot write and then leaves nothing behind.
func TestWriteRefuses(t *testing.T) {
	cases := []struct {
		what    string
		prepare func(t *testing.T, dir string)
		params  Params
		want    error
	}{
		{"a file in the directory", func(t *testing.T, dir string) { mkfile(t, filepath.Join(dir, "main.go")) }, Params{Name: "demo"}, ErrNotEmpty},
		{"a hidden file in the directory", func(t *testing.T, dir string) { mkfile(t, filepath.Join(dir, ".git")) }, Params{Name: "demo"}, ErrNotEmpty},
		{"a bad name", nil, Params{Name: "Bad Name"}, ErrInvalidName},
		{"a bad module path", nil, Params{Name: "demo", Module: "example.com/a b"}, ErrInvalidModule},
		{"a module path with a quote", nil, Params{Name: "demo", Module: `example.com/"x"`}, ErrInvalidModule},
	}
	for _, tc := range cases {
		t.Run(tc.what, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "proj")
			var before []string
			if tc.prepare != nil {
				if err := os.Mkdir(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				tc.prepare(t, dir)
				before = list(t, dir)
			}
			if _, err := Write(dir, tc.params); !errors.Is(err, tc.want) {
				t.Fatalf("Write: %v, want %v", err, tc.want)
			}
			if after := list(t, dir); strings.Join(after, ",") != strings.Join(before, ",") {
				t.Errorf("Write changed the directory: %v, was %v", after, before)
			}
		})
	}
}

func TestWriteRefusesAFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "file")
	mkfile(t, path)
	if _, err := Write(path, Params{Name: "demo"}); err == nil {
		t.Fatal("Write into a file succeeded")
	}
}

// go.mod wires the SDK to a checkout, to a published version, or leaves
// the wiring to the author with a commented replace.
func TestWriteGoMod(t *testing.T) {
	sdk := fakeCheckout(t)
	spaced := fakeCheckoutAt(t, filepath.Join(t.TempDir(), "my gpulayer"))
	cases := []struct {
		what     string
		params   Params
		wiring   Wiring
		want     []string
		wantNot  []string
		wantSums bool
	}{
		{"checkout", Params{Name: "demo", SDKDir: sdk}, WiredToCheckout,
			[]string{
				"module example.com/demo\n", "require github.com/gpulayer/gpulayer " + unpublished,
				"\texample.com/one v1.0.0 // indirect\n", "\texample.com/two v0.2.0 // indirect\n",
				"\nreplace github.com/gpulayer/gpulayer => " + sdk + "\n",
			},
			nil, true},
		{"checkout with a space", Params{Name: "demo", SDKDir: spaced}, WiredToCheckout,
			[]string{"\nreplace github.com/gpulayer/gpulayer => \"" + spaced + "\"\n"}, nil, true},
		{"published", Params{Name: "demo", Module: "git.example/team/demo", SDKVersion: "v1.2.3"}, WiredToVersion,
			[]string{"module git.example/team/demo\n", "require github.com/gpulayer/gpulayer v1.2.3\n"},
			[]string{"replace"}, false},
		{"unknown", Params{Name: "demo"}, NotWired,
			[]string{"\n// replace github.com/gpulayer/gpulayer => ../gpulayer\n", "not published yet"},
			[]string{"\nreplace"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.what, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "demo")
			proj, err := Write(dir, tc.params)
			if err != nil {
				t.Fatal(err)
			}
			if proj.Wiring != tc.wiring || proj.Binary != "gpulayer-executor-demo" {
				t.Errorf("project %+v", proj)
			}
			mod := read(t, filepath.Join(dir, "go.mod"))
			for _, s := range tc.want {
				if !strings.Contains(mod, s) {
					t.Errorf("go.mod lacks %q:\n%s", s, mod)
				}
			}
			for _, s := range tc.wantNot {
				if strings.Contains(mod, s) {
					t.Errorf("go.mod holds %q:\n%s", s, mod)
				}
			}
			_, err = os.Stat(filepath.Join(dir, "go.sum"))
			if tc.wantSums != (err == nil) {
				t.Errorf("go.sum present: %v, want %v", err == nil, tc.wantSums)
			}
		})
	}
}

// The Go files are gofmt-clean and name the executor; the Makefile
// builds the binary under the name the plugin directory loader wants.
func TestWriteProject(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo-exec")
	proj, err := Write(dir, Params{Name: "demo-exec"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{".gitignore", "Makefile", "README.md", "executor.go", "executor_test.go", "go.mod", "main.go"}
	if got := list(t, dir); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("wrote %v, want %v", got, want)
	}
	if len(proj.Files) != len(want) {
		t.Errorf("Project.Files %v", proj.Files)
	}
	for _, name := range []string{"main.go", "executor.go", "executor_test.go"} {
		src := []byte(read(t, filepath.Join(dir, name)))
		formatted, err := format.Source(src)
		if err != nil || !bytes.Equal(formatted, src) {
			t.Errorf("%s is not gofmt-clean (%v)", name, err)
		}
	}
	for file, s := range map[string]string{
		"executor.go": `const Name = "demo-exec"`,
		"main.go":     "gpulayer-executor-demo-exec",
		"Makefile":    "BIN := $(PLUGIN_DIR)/gpulayer-executor-demo-exec\n",
		".gitignore":  "/gpulayer-executor-demo-exec\n",
	} {
		if !strings.Contains(read(t, filepath.Join(dir, file)), s) {
			t.Errorf("%s lacks %q", file, s)
		}
	}
	if mk := read(t, filepath.Join(dir, "Makefile")); !strings.Contains(mk, "\n\tgo build -o $(BIN) .\n") {
		t.Errorf("Makefile recipe lines do not start with a tab:\n%s", mk)
	}
}

// The go directive is the one of the module the project builds against.
func TestGoVersionMatchesModule(t *testing.T) {
	mod := read(t, filepath.Join("..", "..", "go.mod"))
	if !strings.Contains(mod, "\ngo "+GoVersion+"\n") {
		t.Errorf("GoVersion %s is not the go directive of go.mod:\n%s", GoVersion, mod)
	}
}

func TestIsCheckout(t *testing.T) {
	other := t.TempDir()
	if err := os.MkdirAll(filepath.Join(other, "sdk", "executor"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "go.mod"), []byte("module example.com/other\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		dir  string
		want bool
	}{
		{filepath.Join("..", ".."), true},
		{fakeCheckout(t), true},
		{other, false},
		{t.TempDir(), false},
		{".", false},
	}
	for _, tc := range cases {
		if got := IsCheckout(tc.dir); got != tc.want {
			t.Errorf("IsCheckout(%s) = %v, want %v", tc.dir, got, tc.want)
		}
	}
}

// The binary's own source wins; else the checkout above the current
// directory; else none.
func TestLocate(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	other := fakeCheckout(t)
	cases := []struct {
		src, cwd, dir, how string
	}{
		{other, ".", other, FromBinary},
		{"", ".", root, FromCwd},
		{"", filepath.Join(root, "sdk", "executor"), root, FromCwd},
		{t.TempDir(), ".", root, FromCwd},
		{"", t.TempDir(), "", ""},
		{"", "", "", ""},
	}
	for _, tc := range cases {
		if dir, how := locate(tc.src, tc.cwd); dir != tc.dir || how != tc.how {
			t.Errorf("locate(%q, %q) = %q, %q; want %q, %q", tc.src, tc.cwd, dir, how, tc.dir, tc.how)
		}
	}
	// A test binary is built from this checkout without -trimpath.
	if dir, how := Locate(""); dir != root || how != FromBinary {
		t.Errorf("Locate(\"\") = %q, %q; want %q from the binary", dir, how, root)
	}
}

func fakeCheckout(t *testing.T) string {
	t.Helper()
	return fakeCheckoutAt(t, t.TempDir())
}

// fakeCheckoutAt makes dir look like a GpuLayer checkout with two
// requirements.
func fakeCheckoutAt(t *testing.T, dir string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "sdk", "executor"), 0o755); err != nil {
		t.Fatal(err)
	}
	mod := "module " + SDKModule + "\n\ngo " + GoVersion + "\n\nrequire example.com/one v1.0.0\n\nrequire (\n\texample.com/two v0.2.0 // indirect\n)\n"
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(mod), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), []byte("example.com/x v1.0.0 h1:AAAA=\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func mkfile(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// list names what dir holds, sorted; nothing when it does not exist.
func list(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}
