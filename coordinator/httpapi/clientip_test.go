package httpapi

import (
	"net/http/httptest"
	"net/netip"
	"testing"
)

func TestSourceOf(t *testing.T) {
	loopOnly := LoopbackPrefixes
	withLAN, _ := ParsePrefixes([]string{"127.0.0.0/8", "::1/128", "10.0.0.0/8"})
	cases := []struct {
		name    string
		trusted []netip.Prefix
		peer    string
		headers map[string][]string
		want    string
		trusts  bool
	}{
		{"untrusted peer, no headers", loopOnly, "203.0.113.9:5000", nil, "203.0.113.9", false},
		{"untrusted peer spoofs X-Real-IP", loopOnly, "203.0.113.9:5000", map[string][]string{"X-Real-Ip": {"198.51.100.1"}}, "203.0.113.9", false},
		{"untrusted peer spoofs XFF", loopOnly, "203.0.113.9:5000", map[string][]string{"X-Forwarded-For": {"198.51.100.1"}}, "203.0.113.9", false},
		{"trusted peer, no headers", loopOnly, "127.0.0.1:5000", nil, "127.0.0.1", true},
		{"trusted peer, X-Real-IP", loopOnly, "127.0.0.1:5000", map[string][]string{"X-Real-Ip": {"198.51.100.1"}}, "198.51.100.1", true},
		{"X-Real-IP wins over XFF", loopOnly, "127.0.0.1:5000", map[string][]string{"X-Real-Ip": {"198.51.100.1"}, "X-Forwarded-For": {"192.0.2.7"}}, "198.51.100.1", true},
		{"trusted peer, XFF right-most hop", loopOnly, "127.0.0.1:5000", map[string][]string{"X-Forwarded-For": {"192.0.2.1, 198.51.100.2"}}, "198.51.100.2", true},
		{"client-written left part is ignored", loopOnly, "127.0.0.1:5000", map[string][]string{"X-Forwarded-For": {"203.0.113.5, 198.51.100.9"}}, "198.51.100.9", true},
		{"several XFF headers are one list", withLAN, "127.0.0.1:5000", map[string][]string{"X-Forwarded-For": {"198.51.100.9, 203.0.113.5", "10.1.2.3"}}, "203.0.113.5", true},
		{"trusted hops are skipped", withLAN, "10.0.0.2:80", map[string][]string{"X-Forwarded-For": {"203.0.113.5, 10.9.9.9, 127.0.0.1"}}, "203.0.113.5", true},
		{"all hops trusted: left-most", withLAN, "127.0.0.1:1", map[string][]string{"X-Forwarded-For": {"10.0.0.5, 127.0.0.1"}}, "10.0.0.5", true},
		{"hop with a port", loopOnly, "127.0.0.1:1", map[string][]string{"X-Forwarded-For": {"198.51.100.2:4431"}}, "198.51.100.2", true},
		{"IPv6 hop in brackets", loopOnly, "[::1]:1", map[string][]string{"X-Forwarded-For": {"[2001:db8::7]:443"}}, "2001:db8::7", true},
		{"IPv4-mapped peer", loopOnly, "[::ffff:127.0.0.1]:1", map[string][]string{"X-Real-Ip": {"198.51.100.1"}}, "198.51.100.1", true},
		{"garbage X-Real-IP: unknown", loopOnly, "127.0.0.1:1", map[string][]string{"X-Real-Ip": {"not-an-ip"}}, "invalid IP", true},
		{"empty XFF: unknown", loopOnly, "127.0.0.1:1", map[string][]string{"X-Forwarded-For": {" , "}}, "invalid IP", true},
		{"garbage right-most hop: unknown", loopOnly, "127.0.0.1:1", map[string][]string{"X-Forwarded-For": {"198.51.100.1, nope"}}, "invalid IP", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/v1/status/health", nil)
			r.RemoteAddr = c.peer
			for k, vs := range c.headers {
				for _, v := range vs {
					r.Header.Add(k, v)
				}
			}
			got, trusted := sourceOf(r, c.trusted, false)
			if got.String() != c.want || trusted != c.trusts {
				t.Fatalf("source %s (peer trusted %v), want %s (%v)", got, trusted, c.want, c.trusts)
			}
		})
	}
}

func TestSourceKeyGroupsIPv6By64(t *testing.T) {
	a := sourceKey(netip.MustParseAddr("2001:db8:1:2::1"))
	b := sourceKey(netip.MustParseAddr("2001:db8:1:2:ffff::9"))
	c := sourceKey(netip.MustParseAddr("2001:db8:1:3::1"))
	if a != b || a == c {
		t.Fatalf("keys %s %s %s: one /64 must share a key, another must not", a, b, c)
	}
	if sourceKey(netip.MustParseAddr("192.0.2.1")) != "192.0.2.1" {
		t.Fatal("IPv4 key")
	}
}
