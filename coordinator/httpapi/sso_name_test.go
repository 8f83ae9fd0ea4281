package httpapi

import (
	"strings"
	"testing"
)

// TestSSOTokenNameFitsTheGrammar: whatever the subject (a UUID, an email,
// an Auth0 "provider|id", a 255-byte one, spaces and slashes), the minted
// token's name is a valid token name, starts sso-, and ends with the id
// prefix that keeps two logins apart.
func TestSSOTokenNameFitsTheGrammar(t *testing.T) {
	const id = "0123456789abcdef"
	for _, tc := range []struct{ subject, want string }{
		{"f3a9c2d0-1b2c-4d5e-8f90-a1b2c3d4e5f6", "sso-f3a9c2d0-1b2c-4d5e-8f90-a1b2c3d4e5f6-01234567"},
		{"alice@example.com", "sso-alice@example.com-01234567"},
		{"google-oauth2|1234", "sso-google-oauth2-1234-01234567"},
		{"a b/c", "sso-a-b-c-01234567"},
		{strings.Repeat("x", 255), "sso-" + strings.Repeat("x", 51) + "-01234567"},
	} {
		got := ssoTokenName(tc.subject, id)
		if got != tc.want || len(got) > 64 || validateTokenName(got) != nil {
			t.Errorf("%q: %q (valid: %v), want %q", tc.subject, got, validateTokenName(got), tc.want)
		}
	}
}
