package main

import (
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// token list says whether each token still works.
func TestTokenState(t *testing.T) {
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		name string
		tok  api.TokenInfo
		want string
	}{
		{"client token", api.TokenInfo{Kind: api.TokenKindClient}, "live"},
		{"one-time join code, unused", api.TokenInfo{Kind: api.TokenKindJoin, MaxUses: 1}, "live"},
		{"one-time join code, used", api.TokenInfo{Kind: api.TokenKindJoin, MaxUses: 1, Uses: 1}, "used up"},
		{"join token without a bound", api.TokenInfo{Kind: api.TokenKindJoin, Uses: 40}, "live"},
		{"expired", api.TokenInfo{Kind: api.TokenKindJoin, ExpiresAt: api.FormatTime(now.Add(-time.Minute))}, "expired"},
		{"not yet expired", api.TokenInfo{Kind: api.TokenKindJoin, ExpiresAt: api.FormatTime(now.Add(time.Minute))}, "live"},
		{"revoked wins", api.TokenInfo{Kind: api.TokenKindJoin, MaxUses: 1, Uses: 1, Revoked: true}, "revoked"},
	}
	for _, c := range cases {
		if got := tokenState(c.tok, now); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
