package ui

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Serve answers each file with its type, the security headers and an
// ETag; a request that already holds the file gets 304 and no body, and
// HEAD gets no body.
func TestServe(t *testing.T) {
	index, _ := Lookup("")
	cases := []struct {
		name        string
		method      string
		ifNoneMatch string
		status      int
		body        bool
	}{
		{"get", http.MethodGet, "", http.StatusOK, true},
		{"head", http.MethodHead, "", http.StatusOK, false},
		{"revalidate unchanged", http.MethodGet, index.ETag, http.StatusNotModified, false},
		{"revalidate changed", http.MethodGet, `"stale"`, http.StatusOK, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest(c.method, "/ui/", nil)
			if c.ifNoneMatch != "" {
				r.Header.Set("If-None-Match", c.ifNoneMatch)
			}
			w := httptest.NewRecorder()
			Serve(w, r, index)
			if w.Code != c.status {
				t.Fatalf("status %d, want %d", w.Code, c.status)
			}
			if got := w.Body.Len() > 0; got != c.body {
				t.Errorf("body sent: %v, want %v", got, c.body)
			}
			for k, v := range SecurityHeaders {
				if w.Header().Get(k) != v {
					t.Errorf("%s: %q, want %q", k, w.Header().Get(k), v)
				}
			}
			if w.Header().Get("ETag") != index.ETag || w.Header().Get("Cache-Control") != CacheControl {
				t.Errorf("cache headers: %v", w.Header())
			}
			if c.status == http.StatusOK && w.Header().Get("Content-Type") != index.ContentType {
				t.Errorf("content type %q", w.Header().Get("Content-Type"))
			}
		})
	}
}

// The policy refuses inline code and other origins and framing, and keeps
// forms from being submitted.
func TestContentSecurityPolicy(t *testing.T) {
	for _, want := range []string{"default-src 'self'", "script-src 'self'", "style-src 'self'", "connect-src 'self'",
		"frame-ancestors 'none'", "form-action 'none'", "object-src 'none'", "require-trusted-types-for 'script'"} {
		if !strings.Contains(ContentSecurityPolicy, want) {
			t.Errorf("policy lacks %q", want)
		}
	}
	for _, bad := range []string{"unsafe-inline", "unsafe-eval", "*", "http:", "https:", "data:"} {
		if strings.Contains(ContentSecurityPolicy, bad) {
			t.Errorf("policy allows %q", bad)
		}
	}
}
