package executor

import (
	"slices"
	"testing"
)

func TestEnvironDropsHandshake(t *testing.T) {
	t.Setenv(Handshake.MagicCookieKey, Handshake.MagicCookieValue)
	t.Setenv("PLUGIN_CLIENT_CERT", "pem")
	t.Setenv("PLUGIN_MIN_PORT", "10000")
	t.Setenv("GPULAYER_KEEP_ME", "yes")
	env := Environ()
	for _, kv := range env {
		for _, bad := range []string{Handshake.MagicCookieKey + "=", "PLUGIN_CLIENT_CERT=", "PLUGIN_MIN_PORT="} {
			if len(kv) >= len(bad) && kv[:len(bad)] == bad {
				t.Errorf("Environ kept %q", kv)
			}
		}
	}
	if !slices.Contains(env, "GPULAYER_KEEP_ME=yes") {
		t.Error("Environ dropped an ordinary variable")
	}
}
