package ui

import (
	"regexp"
	"strings"
	"testing"
)

// The index references its stylesheet, scripts and icon by absolute path
// under /ui/, and every one of them is embedded.
func TestIndexReferencesOnlyEmbeddedFiles(t *testing.T) {
	index, ok := Lookup("")
	if !ok {
		t.Fatal("no index")
	}
	refs := regexp.MustCompile(`(?:src|href)="([^"#]+)"`).FindAllStringSubmatch(string(index.Body), -1)
	if len(refs) < 3 {
		t.Fatalf("index references %d files, want the stylesheet, the script and the icon", len(refs))
	}
	for _, m := range refs {
		name, ok := strings.CutPrefix(m[1], "/ui/")
		if !ok {
			t.Errorf("index references %q, not a path under /ui/", m[1])
			continue
		}
		if _, ok := Lookup(name); !ok {
			t.Errorf("index references %q, which is not embedded", m[1])
		}
	}
}

// Every module a script imports is embedded, so the page loads whole.
func TestScriptImportsAreEmbedded(t *testing.T) {
	imp := regexp.MustCompile(`(?m)^import .* from '\./([^']+)';$`)
	seen := 0
	for _, name := range Names() {
		f, _ := Lookup(name)
		for _, m := range imp.FindAllStringSubmatch(string(f.Body), -1) {
			seen++
			if _, ok := Lookup(m[1]); !ok {
				t.Errorf("%s imports %s, which is not embedded", name, m[1])
			}
		}
	}
	if seen == 0 {
		t.Fatal("no import found: the pattern no longer matches the scripts")
	}
}

// No asset names another origin: nothing is fetched from a CDN. The one
// URL allowed is SVG's namespace name, which is an identifier, never
// fetched: as the favicon's xmlns attribute, and as the string the
// chart's createElementNS takes.
func TestAssetsNameNoOtherOrigin(t *testing.T) {
	url := regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}`)
	for _, name := range Names() {
		f, _ := Lookup(name)
		body := strings.ReplaceAll(string(f.Body), `xmlns="http://www.w3.org/2000/svg"`, "")
		body = strings.ReplaceAll(body, `const NS = 'http://www.w3.org/2000/svg';`, "")
		if m := url.FindString(body); m != "" {
			t.Errorf("%s names another origin: %q", name, m)
		}
	}
}

// Data reaches the page only as text: no asset uses an HTML sink, eval,
// inline handlers or browser storage.
func TestAssetsAvoidHTMLSinksAndStorage(t *testing.T) {
	forbidden := []struct {
		pattern string
		why     string
	}{
		{"innerHTML", "parses data as HTML"},
		{"outerHTML", "parses data as HTML"},
		{"insertAdjacentHTML", "parses data as HTML"},
		{"document.write", "parses data as HTML"},
		{"eval(", "runs strings as code"},
		{"new Function", "runs strings as code"},
		{"localStorage", "would keep the token"},
		{"sessionStorage", "would keep the token"},
		{"document.cookie", "would keep the token"},
		{"indexedDB", "would keep the token"},
		{" onclick=", "inline handler (refused by the CSP)"},
		{" style=", "inline style (refused by the CSP)"},
		{"<script>", "inline script (refused by the CSP)"},
	}
	for _, name := range Names() {
		f, _ := Lookup(name)
		for _, bad := range forbidden {
			if strings.Contains(string(f.Body), bad.pattern) {
				t.Errorf("%s contains %q: %s", name, bad.pattern, bad.why)
			}
		}
	}
}

// Each kind of asset gets its content type, and only known kinds are
// served.
func TestContentTypes(t *testing.T) {
	cases := []struct {
		name string
		want string
	}{
		{"", "text/html; charset=utf-8"},
		{"index.html", "text/html; charset=utf-8"},
		{"app.css", "text/css; charset=utf-8"},
		{"app.js", "text/javascript; charset=utf-8"},
		{"api.js", "text/javascript; charset=utf-8"},
		{"favicon.svg", "image/svg+xml"},
	}
	for _, c := range cases {
		f, ok := Lookup(c.name)
		if !ok {
			t.Errorf("%q is not served", c.name)
			continue
		}
		if f.ContentType != c.want {
			t.Errorf("%q: content type %q, want %q", c.name, f.ContentType, c.want)
		}
	}
	for _, name := range []string{"assets/index.html", "../ui.go", "/index.html", "index.html/", "nothing.js", "."} {
		if _, ok := Lookup(name); ok {
			t.Errorf("%q is served; only exact asset names are", name)
		}
	}
}
