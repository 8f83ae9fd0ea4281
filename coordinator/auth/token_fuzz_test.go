package auth

import (
	"errors"
	"strings"
	"testing"
)

// FuzzParse gives Parse arbitrary bearer strings. It must never panic and
// must refuse only with ErrMalformedToken. A token it accepts has a known
// prefix, a 16-hex-digit id and a 64-hex-digit secret, all lowercase;
// renders back to exactly the string it was parsed from; and hashes to 64
// hex digits.
func FuzzParse(f *testing.F) {
	id, secret := strings.Repeat("0a", idBytes), strings.Repeat("f1", secretBytes)
	for _, s := range []string{
		"glc_" + id + "_" + secret,
		"glj_" + id + "_" + secret,
		"gli_" + id + "_" + secret,
		"glw_" + id + "_" + secret,
		"glx_" + id + "_" + secret,
		"glc_" + strings.ToUpper(id) + "_" + secret,
		"glc_" + id + "_" + secret + "_",
		"glc_" + id[1:] + "_" + secret,
		"glc__" + secret,
		"glc_" + id + "_" + secret[:63] + "\xff",
		"",
		"_",
		"__",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tok, err := Parse(s)
		if err != nil {
			if !errors.Is(err, ErrMalformedToken) {
				t.Fatalf("Parse(%q): %v, want ErrMalformedToken", s, err)
			}
			if tok != (Token{}) {
				t.Fatalf("Parse(%q) refused but returned %+v", s, tok)
			}
			return
		}
		if KindForPrefix(tok.Prefix) == KindNone {
			t.Fatalf("Parse(%q): prefix %q names no credential kind", s, tok.Prefix)
		}
		for _, part := range []struct {
			name, v string
			n       int
		}{{"id", tok.ID, 2 * idBytes}, {"secret", tok.Secret, 2 * secretBytes}} {
			if len(part.v) != part.n || strings.Trim(part.v, "0123456789abcdef") != "" {
				t.Fatalf("Parse(%q): %s %q is not %d lowercase hex digits", s, part.name, part.v, part.n)
			}
		}
		if tok.String() != s {
			t.Fatalf("Parse(%q) renders back as %q", s, tok.String())
		}
		if again, err := Parse(tok.String()); err != nil || again != tok {
			t.Fatalf("Parse(%q) does not parse its own rendering: %+v, %v", s, again, err)
		}
		if h := tok.Hash(); len(h) != 64 || strings.Trim(h, "0123456789abcdef") != "" || !Verify(tok.Secret, h) {
			t.Fatalf("Parse(%q): hash %q", s, h)
		}
	})
}
