package auth

import (
	"regexp"
	"strings"
)

// credentialShape matches a credential, whole or cut short: the format is
// "<prefix>_<id>_<secret>" with a three-letter prefix starting "gl"
// (token.go).
var credentialShape = regexp.MustCompile(`gl[a-z]_[0-9A-Za-z][0-9A-Za-z_]*`)

// Redact replaces anything in s shaped like a credential, keeping only its
// prefix: "glc_0123…_abcd…" becomes "glc_[redacted]". For text that may
// quote what someone typed (a URL path, a config file's line) on its way
// to a log or an error message.
func Redact(s string) string {
	if !strings.Contains(s, "gl") || !strings.Contains(s, "_") {
		return s
	}
	return credentialShape.ReplaceAllStringFunc(s, func(m string) string {
		return m[:4] + "[redacted]"
	})
}
