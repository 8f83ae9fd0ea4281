package ui

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"path"
	"sort"
	"strings"
)

//go:embed assets
var embedded embed.FS

// Index is the file served for /ui and /ui/.
const Index = "index.html"

// File is one embedded asset, ready to serve.
type File struct {
	Name        string
	ContentType string
	Body        []byte
	// ETag is a strong validator derived from the content.
	ETag string
}

// contentTypes are the types of the asset kinds the dashboard uses; a
// file of any other kind is not served.
var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".svg":  "image/svg+xml",
}

var files = load()

func load() map[string]File {
	out := map[string]File{}
	err := fs.WalkDir(embedded, "assets", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		ct, ok := contentTypes[path.Ext(p)]
		if !ok {
			return nil
		}
		body, err := embedded.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		name := strings.TrimPrefix(p, "assets/")
		out[name] = File{Name: name, ContentType: ct, Body: body, ETag: `"` + hex.EncodeToString(sum[:12]) + `"`}
		return nil
	})
	if err != nil {
		panic("ui: reading embedded assets: " + err.Error())
	}
	return out
}

// Lookup finds the asset for a path below /ui/ ("" is the index). Only
// exact names match: no directory listings, no path cleaning.
func Lookup(name string) (File, bool) {
	if name == "" {
		name = Index
	}
	f, ok := files[name]
	return f, ok
}

// Names lists every asset, sorted.
func Names() []string {
	out := make([]string, 0, len(files))
	for n := range files {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
