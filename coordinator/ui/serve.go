package ui

import (
	"bytes"
	"net/http"
	"time"
)

// ContentSecurityPolicy allows the page to load only its own files and to
// call only its own origin: no inline script or style, no eval, no
// plugins, no framing, no form submission (the sign-in form is handled by
// script, so a token can never end up in a URL), and Trusted Types
// required, so that assigning a string to innerHTML and the like throws
// in browsers that enforce them.
const ContentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; " +
	"require-trusted-types-for 'script'; trusted-types 'none'"

// CacheControl makes the browser revalidate every file (against its ETag)
// each time, so that a coordinator upgrade is seen at once; a revalidation
// of an unchanged file is a 304 without a body.
const CacheControl = "no-cache"

// SecurityHeaders are set on every dashboard answer.
var SecurityHeaders = map[string]string{
	"Content-Security-Policy":      ContentSecurityPolicy,
	"X-Content-Type-Options":       "nosniff",
	"Referrer-Policy":              "no-referrer",
	"X-Frame-Options":              "DENY",
	"Cross-Origin-Opener-Policy":   "same-origin",
	"Cross-Origin-Resource-Policy": "same-origin",
	"Permissions-Policy":           "camera=(), microphone=(), geolocation=(), payment=(), usb=()",
}

// SetSecurityHeaders sets SecurityHeaders on h; a not-found answer for a
// dashboard path gets them too.
func SetSecurityHeaders(h http.Header) {
	for k, v := range SecurityHeaders {
		h.Set(k, v)
	}
}

// Serve writes f with its content type, the security headers and cache
// validators; a matching If-None-Match is answered 304, and HEAD gets the
// headers only.
func Serve(w http.ResponseWriter, r *http.Request, f File) {
	h := w.Header()
	SetSecurityHeaders(h)
	h.Set("Content-Type", f.ContentType)
	h.Set("Cache-Control", CacheControl)
	h.Set("ETag", f.ETag)
	http.ServeContent(w, r, f.Name, time.Time{}, bytes.NewReader(f.Body))
}
