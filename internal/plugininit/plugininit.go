package plugininit

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"text/template"
)

// SDKModule is the module path plugins import the SDK from.
const SDKModule = "github.com/gpulayer/gpulayer"

// GoVersion is the go directive written into a new project's go.mod: the
// one of the GpuLayer module it builds against.
const GoVersion = "1.26.8"

// unpublished is the version a project requires while the SDK is wired
// to a local checkout by a replace directive (the go command's own
// placeholder for a module with no version).
const unpublished = "v0.0.0-00010101000000-000000000000"

// BinaryPrefix starts the file name the agent's --plugin-dir loader looks
// for: gpulayer-executor-<name>.
const BinaryPrefix = "gpulayer-executor-"

// Params describe the project to write.
type Params struct {
	// Name is the executor's name (ValidateName).
	Name string
	// Module is the new module's path; empty means example.com/<Name>.
	Module string
	// SDKDir is the absolute path of a GpuLayer checkout go.mod replaces
	// the SDK module with. Empty leaves the replace commented out unless
	// SDKVersion is a published version.
	SDKDir string
	// SDKVersion is a published version of the SDK module to require
	// (from the running gpulayer binary's build info); empty while the
	// module is unpublished.
	SDKVersion string
}

// Wiring says how the written go.mod finds the SDK module.
type Wiring int

const (
	// WiredToCheckout: a replace directive points at Params.SDKDir.
	WiredToCheckout Wiring = iota
	// WiredToVersion: a published version is required; nothing replaced.
	WiredToVersion
	// NotWired: the replace directive is commented out; the author must
	// point it at a checkout before the project builds.
	NotWired
)

// Project is what Write wrote.
type Project struct {
	Dir    string   // absolute
	Binary string   // gpulayer-executor-<name>
	Files  []string // relative to Dir, in the order written
	Wiring Wiring
}

//go:embed templates/*.tmpl
var templates embed.FS

// files maps each template to the file it becomes.
var files = []struct{ tmpl, name string }{
	{"go.mod.tmpl", "go.mod"},
	{"main.go.tmpl", "main.go"},
	{"executor.go.tmpl", "executor.go"},
	{"executor_test.go.tmpl", "executor_test.go"},
	{"Makefile.tmpl", "Makefile"},
	{"README.md.tmpl", "README.md"},
	{"gitignore.tmpl", ".gitignore"},
}

// modulePattern is a conservative module path: what go.mod holds without
// quoting and the go command accepts.
var modulePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._~-]*(/[A-Za-z0-9._~-]+)*$`)

// templateData is what the templates see.
type templateData struct {
	Name, Module, Binary, GoVersion, SDKModule, SDKVersion string
	// SDKDir is the replace target, quoted for go.mod where needed.
	SDKDir string
	// Wired: go.mod replaces the SDK with SDKDir; Published: it requires
	// a published SDKVersion and replaces nothing.
	Wired, Published bool
	// Requires are the checkout's own requirements ("path version").
	Requires []string
}

// Write creates dir (which must be absent or empty) and writes the
// project into it. It writes nothing when p is invalid or dir is not
// empty.
func Write(dir string, p Params) (Project, error) {
	if err := ValidateName(p.Name); err != nil {
		return Project{}, err
	}
	if p.Module == "" {
		p.Module = "example.com/" + p.Name
	}
	if !modulePattern.MatchString(p.Module) {
		return Project{}, fmt.Errorf("%w %q", ErrInvalidModule, p.Module)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Project{}, err
	}
	if err := ensureEmpty(abs); err != nil {
		return Project{}, err
	}
	d := templateData{
		Name: p.Name, Module: p.Module, Binary: BinaryPrefix + p.Name, GoVersion: GoVersion,
		SDKModule: SDKModule, SDKVersion: unpublished, SDKDir: modQuote(p.SDKDir),
		Wired: p.SDKDir != "", Published: p.SDKDir == "" && p.SDKVersion != "",
	}
	if p.SDKVersion != "" {
		d.SDKVersion = p.SDKVersion
	}
	if d.Wired {
		if d.Requires, err = checkoutRequires(p.SDKDir); err != nil {
			return Project{}, fmt.Errorf("reading the checkout's go.mod: %w", err)
		}
	}
	proj := Project{Dir: abs, Binary: d.Binary, Wiring: NotWired}
	switch {
	case d.Wired:
		proj.Wiring = WiredToCheckout
	case d.Published:
		proj.Wiring = WiredToVersion
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return Project{}, err
	}
	for _, f := range files {
		if err := writeTemplate(filepath.Join(abs, f.name), f.tmpl, d); err != nil {
			return proj, err
		}
		proj.Files = append(proj.Files, f.name)
	}
	if d.Wired {
		// The checkout's go.sum holds every checksum the project needs
		// (tidy drops the rest), so go mod tidy needs no network.
		copied, err := copySums(filepath.Join(p.SDKDir, "go.sum"), filepath.Join(abs, "go.sum"))
		if err != nil {
			return proj, err
		}
		if copied {
			proj.Files = append(proj.Files, "go.sum")
		}
	}
	return proj, nil
}

// ensureEmpty refuses a directory that holds anything, or a path that is
// not a directory.
func ensureEmpty(dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("%s: %w", dir, err)
	case len(entries) > 0:
		return fmt.Errorf("%w: %s holds %s; choose another with --dir", ErrNotEmpty, dir, entries[0].Name())
	}
	return nil
}

func writeTemplate(path, name string, d templateData) error {
	t, err := template.ParseFS(templates, "templates/"+name)
	if err != nil {
		return err
	}
	var b strings.Builder
	if err := t.Execute(&b, d); err != nil {
		return fmt.Errorf("template %s: %w", name, err)
	}
	return writeNew(path, []byte(b.String()))
}

// writeNew writes a file that must not exist yet.
func writeNew(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// copySums copies the checkout's go.sum, if it has one, and says whether
// it did.
func copySums(from, to string) (bool, error) {
	b, err := os.ReadFile(from)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, writeNew(to, b)
}

// modQuote quotes a path as go.mod needs it when it holds a space, a
// quote or a comment marker.
func modQuote(path string) string {
	if path == "" || !strings.ContainsAny(path, " \t\"'`") && !strings.Contains(path, "//") && !strings.Contains(path, "/*") {
		return path
	}
	return fmt.Sprintf("%q", path)
}
