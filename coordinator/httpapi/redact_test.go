package httpapi

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestRedactCredentials(t *testing.T) {
	secret := strings.Repeat("ab", 32)
	cases := []struct{ in, want string }{
		{"/v1/jobs/glc_0123456789abcdef_" + secret, "/v1/jobs/glc_[redacted]"},
		{"/v1/jobs/glw_0123456789abcdef_" + secret + "/logs", "/v1/jobs/glw_[redacted]/logs"},
		{"/v1/x/glj_0123456789abcdef_" + secret[:10], "/v1/x/glj_[redacted]"},
		{"job gli_0123456789abcdef_" + secret + ": not found", "job gli_[redacted]: not found"},
		{"/v1/jobs/j0123456789abcdef", "/v1/jobs/j0123456789abcdef"},
		{"/v1/artifacts/" + secret, "/v1/artifacts/" + secret},
	}
	for _, c := range cases {
		if got := redactCredentials(c.in); got != c.want {
			t.Errorf("redact(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestCapMessage(t *testing.T) {
	long := strings.Repeat("é", maxMessageBytes)
	got := capMessage(long)
	if len(got) > maxMessageBytes+len("… (message cut)") || !utf8.ValidString(got) || !strings.HasSuffix(got, "(message cut)") {
		t.Fatalf("capMessage gave %d bytes, valid UTF-8 %v", len(got), utf8.ValidString(got))
	}
	if short := "fine"; capMessage(short) != short {
		t.Fatalf("a short message was changed")
	}
}
