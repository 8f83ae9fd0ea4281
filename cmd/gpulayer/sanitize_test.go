package main

import (
	"bytes"
	"testing"
)

func TestEscapeControls(t *testing.T) {
	for _, tc := range []struct {
		name, in, cell, text string
	}{
		{"plain", "train-llama 7b", "train-llama 7b", "train-llama 7b"},
		{"utf8", "résumé ✓ 日本", "résumé ✓ 日本", "résumé ✓ 日本"},
		{"osc title", "\x1b]0;pwned\x07", `\x1b]0;pwned\x07`, `\x1b]0;pwned\x07`},
		{"csi 7-bit", "\x1b[31mred", `\x1b[31mred`, `\x1b[31mred`},
		{"csi c1 byte", "\x9b31m", `\x9b31m`, `\x9b31m`},
		{"csi c1 rune", "\u009b31m", `\u009b31m`, `\u009b31m`},
		{"nel c1", "a\u0085b", `a\u0085b`, `a\u0085b`},
		{"del", "a\x7fb", `a\x7fb`, `a\x7fb`},
		{"nul", "a\x00b", `a\x00b`, `a\x00b`},
		{"carriage return", "ok\rFAILED", `ok\rFAILED`, `ok\rFAILED`},
		{"newline and tab", "a\tb\nc", `a\tb\nc`, "a\tb\nc"},
		{"bidi override", "abc\u202edcba", `abc\u202edcba`, `abc\u202edcba`},
		{"line separator", "a\u2028b", `a\u2028b`, `a\u2028b`},
		{"invalid utf8", "a\xffb", `a\xffb`, `a\xffb`},
		{"empty", "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := cell(tc.in); got != tc.cell {
				t.Errorf("cell(%q) = %q, want %q", tc.in, got, tc.cell)
			}
			if got := escapeControls(tc.in, keepLayout); got != tc.text {
				t.Errorf("text(%q) = %q, want %q", tc.in, got, tc.text)
			}
			var b bytes.Buffer
			if _, err := (safeWriter{&b}).Write([]byte(tc.in)); err != nil || b.String() != tc.text {
				t.Errorf("safeWriter wrote %q (%v), want %q", b.String(), err, tc.text)
			}
		})
	}
}
