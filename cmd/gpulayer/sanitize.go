package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"
)

// Everything the CLI prints for people may hold text from others: job
// names, reasons, worker labels, error messages, a task's own output. A
// terminal acts on control characters in it (ESC starts a sequence that
// can set the window title, move the cursor, rewrite what is shown, or on
// some terminals write to the clipboard; a lone C1 byte 0x9b is CSI on
// others), so human output passes through here. JSON output does not: it
// stays exact, and encoding/json already escapes C0 characters.
//
// An escaped character is written as Go writes it in a quoted string:
// \x1b, \r, \u009b, \u202e; a byte that is not UTF-8 as \xNN.

// keepLayout are the controls human text keeps: the line ends and tabs
// the CLI writes itself (tabwriter columns, one sentence a line).
const keepLayout = "\n\t"

// cell is s for one table cell or one field: every control character is
// escaped, line ends and tabs too, so a value can neither move the cursor
// nor forge a row or a column.
func cell(s string) string { return escapeControls(s, "") }

// escapeControls escapes, in s, every C0 control but those in keep, DEL,
// every C1 control, the Unicode line and paragraph separators and the
// bidirectional overrides (which reorder what is shown), and every byte
// that is not UTF-8. Other text is unchanged.
func escapeControls(s string, keep string) string {
	if clean(s, keep) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case unsafeRune(r) && !strings.ContainsRune(keep, r):
			b.WriteString(escapeRune(r))
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// clean reports whether s needs no escape: the common case, checked
// without allocating.
func clean(s string, keep string) bool {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || unsafeRune(r) && !strings.ContainsRune(keep, r) {
			return false
		}
		i += size
	}
	return true
}

// unsafeRune reports whether a terminal may act on r rather than show it.
func unsafeRune(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case r == '\u2028', r == '\u2029': // line and paragraph separators
		return true
	case r >= '\u202a' && r <= '\u202e', r >= '\u2066' && r <= '\u2069', r == '\u200e', r == '\u200f', r == '\u061c':
		return true // bidirectional embeddings, overrides, isolates and marks
	}
	return false
}

func escapeRune(r rune) string {
	switch r {
	case '\n':
		return `\n`
	case '\r':
		return `\r`
	case '\t':
		return `\t`
	}
	if r < 0x80 {
		return fmt.Sprintf(`\x%02x`, r)
	}
	return fmt.Sprintf(`\u%04x`, r)
}

// safeWriter escapes, in everything written through it, the controls a
// terminal acts on; it keeps line ends and tabs. It is the last guard of
// every human output path: a value that reached it without going through
// cell still cannot drive the terminal.
type safeWriter struct{ w io.Writer }

func (s safeWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(s.w, escapeControls(string(p), keepLayout)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// humanOut and humanErr are stdout and stderr for people: sentences,
// tables, errors. JSON, tokens, artifact bytes and raw logs go to
// os.Stdout itself.
var (
	humanOut io.Writer = safeWriter{os.Stdout}
	humanErr io.Writer = safeWriter{os.Stderr}
)

// logOutput is how `job logs` and `submit --wait` print a task's output:
// to a terminal, with its controls escaped but its line ends and tabs
// kept (so it cannot drive the terminal, and still reads as it was
// written); to a file or a pipe, or with --raw, byte for byte.
type logOutput struct{ raw bool }

func (o logOutput) write(f *os.File, data string) error {
	if !o.raw && isTerminal(f) {
		data = escapeControls(data, keepLayout)
	}
	_, err := io.WriteString(f, data)
	return err
}
