package httpapi

import (
	"unicode/utf8"

	"github.com/gpulayer/gpulayer/coordinator/auth"
)

// redactCredentials keeps credentials a client put in a URL path, by
// mistake or on purpose, out of the coordinator's log and its error
// messages (auth.Redact).
func redactCredentials(s string) string { return auth.Redact(s) }

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
