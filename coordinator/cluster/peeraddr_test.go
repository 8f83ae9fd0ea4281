package cluster

import (
	"errors"
	"strings"
	"testing"
)

// A Raft peer's id and address are checked before they reach the
// configuration: an address Raft cannot dial, once added, costs the
// cluster its quorum (finding 3 of the third review).
func TestCheckPeer(t *testing.T) {
	cases := []struct {
		id, addr string
		ok       bool
	}{
		{"c2", "10.0.0.2:7000", true},
		{"c2", "c2.example.com:7000", true},
		{"c2", "[2001:db8::2]:7000", true},
		{"10.0.0.2:7000", "10.0.0.2:7000", true}, // the default id is the address
		{"[::1]:7000", "[::1]:7000", true},
		{"c2", "localhost:1", true},
		{"c2", "not an addr", false},
		{"c2", "10.0.0.2", false},
		{"c2", "10.0.0.2:0", false},
		{"c2", "10.0.0.2:65536", false},
		{"c2", "10.0.0.2:+80", false},
		{"c2", "10.0.0.2:http", false},
		{"c2", "http://10.0.0.2:7000", false},
		{"c2", "tcp://10.0.0.2:7000", false},
		{"c2", ":7000", false},
		{"c2", "0.0.0.0:7000", false},
		{"c2", "[::]:7000", false},
		{"c2", "-bad.example:7000", false},
		{"c2", "bad_host.example:7000", false},
		{"c2", "a..b:7000", false},
		{"c2", strings.Repeat("a", 64) + ".example:7000", false},
		{"c2", strings.Repeat("a.", 130) + "x:7000", false},
		{"c2", "10.0.0.2:7000\n", false},
		{"", "10.0.0.2:7000", false},
		{"has space", "10.0.0.2:7000", false},
		{"c2\x00", "10.0.0.2:7000", false},
		{strings.Repeat("c", 129), "10.0.0.2:7000", false},
	}
	for _, c := range cases {
		err := CheckPeer(c.id, c.addr)
		if (err == nil) != c.ok {
			t.Errorf("CheckPeer(%q, %q): %v, want ok %v", c.id, c.addr, err, c.ok)
		}
		if err != nil && !errors.Is(err, ErrBadPeer) {
			t.Errorf("CheckPeer(%q, %q): %v, not ErrBadPeer", c.id, c.addr, err)
		}
	}
}
