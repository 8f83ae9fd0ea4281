package httpapi

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// Credentials are "<prefix>_<id>_<secret>" with a three-letter prefix
// starting "gl" (coordinator/auth/token.go). A client that puts one in a
// URL path by mistake, or on purpose, must not have it copied into the
// coordinator's log or echoed in an error message. redactCredentials
// replaces anything shaped like one, whole or cut short, keeping only the
// prefix: "glc_0123…_abcd…" becomes "glc_[redacted]".
var credentialShape = regexp.MustCompile(`gl[a-z]_[0-9A-Za-z][0-9A-Za-z_]*`)

func redactCredentials(s string) string {
	if !strings.Contains(s, "gl") || !strings.Contains(s, "_") {
		return s
	}
	return credentialShape.ReplaceAllStringFunc(s, func(m string) string {
		return m[:4] + "[redacted]"
	})
}

// maxMessageBytes bounds an error message. Messages that quote a value
// cut it to 64 bytes already (shortQuote); this catches the rest, so that
// no refusal echoes a megabyte the caller sent.
const maxMessageBytes = 1024

// capMessage cuts msg to maxMessageBytes, on a rune boundary.
func capMessage(msg string) string {
	if len(msg) <= maxMessageBytes {
		return msg
	}
	cut := maxMessageBytes
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return msg[:cut] + "… (message cut)"
}
