package plugininit

import (
	"bufio"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
)

// Where a checkout was found, as Locate reports it.
const (
	FromBinary = "the source the gpulayer binary was built from"
	FromCwd    = "the checkout holding the current directory"
)

// Locate finds a GpuLayer checkout a new project can be wired to: the
// source tree the running binary was built from, if it is still there
// (a binary built with -trimpath or installed as a published version does
// not say), else the checkout that holds cwd. It returns the checkout's
// absolute path and which of FromBinary and FromCwd found it, or "" twice.
func Locate(cwd string) (dir, how string) {
	src := ""
	if PublishedVersion() == "" {
		src = sourceRoot()
	}
	return locate(src, cwd)
}

// locate is Locate with the binary's source root given ("" for none).
func locate(src, cwd string) (dir, how string) {
	if src != "" && IsCheckout(src) {
		return src, FromBinary
	}
	if cwd == "" {
		return "", ""
	}
	abs, err := filepath.Abs(cwd)
	if err != nil {
		return "", ""
	}
	for d := abs; ; d = filepath.Dir(d) {
		if IsCheckout(d) {
			return d, FromCwd
		}
		if filepath.Dir(d) == d {
			return "", ""
		}
	}
}

// sourceRoot is the module root this file was compiled from, as the
// binary recorded it: absolute unless built with -trimpath.
func sourceRoot() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok || !filepath.IsAbs(file) {
		return ""
	}
	// file is <root>/internal/plugininit/locate.go.
	return filepath.Dir(filepath.Dir(filepath.Dir(file)))
}

// PublishedVersion is the SDK module's version the running binary was
// built from when it is a published one (go install …@v1.2.3), else "".
func PublishedVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok || bi.Main.Path != SDKModule {
		return ""
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	return ""
}

// IsCheckout reports whether dir is the root of a GpuLayer checkout: its
// go.mod declares SDKModule and it holds sdk/executor.
func IsCheckout(dir string) bool {
	if st, err := os.Stat(filepath.Join(dir, "sdk", "executor")); err != nil || !st.IsDir() {
		return false
	}
	f, err := os.Open(filepath.Join(dir, "go.mod"))
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`) == SDKModule
		}
	}
	return false
}
