package main

import "testing"

// No reverse proxy is trusted unless one is named: a loopback default let
// any local process choose its source address for rate limits and
// enrollment allowlists (docs/security.md, "The source address"). Loopback
// stays exempt from rate limits.
func TestCoordinatorTrustsNoProxyByDefault(t *testing.T) {
	fs := coordinatorRunCmd().Flags()
	for flag, want := range map[string]string{
		"trusted-proxy-cidrs":     "none",
		"rate-limit-exempt-cidrs": "127.0.0.0/8,::1/128",
	} {
		if got := fs.Lookup(flag).DefValue; got != want {
			t.Errorf("--%s defaults to %q, want %q", flag, got, want)
		}
	}
}
