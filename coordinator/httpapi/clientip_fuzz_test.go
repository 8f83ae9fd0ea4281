package httpapi

import (
	"net/http"
	"net/netip"
	"strings"
	"testing"
)

// Bits of FuzzSourceOf's headers argument: which forwarding headers the
// request carries. A header present with an empty value is not the same
// as an absent one.
const (
	fuzzRealIP = 1 << iota
	fuzzForwardedFor
)

// FuzzSourceOf gives sourceOf arbitrary peer addresses, trusted proxy
// lists and forwarding headers (X-Forwarded-For split on newlines into
// several header lines). It must never panic, and the address it picks
// must follow the rules in clientip.go:
//
//   - an untrusted peer is the source, whatever the headers say;
//   - behind a trusted peer, the source is the last X-Real-IP value when
//     there is one, else the right-most X-Forwarded-For hop that is not a
//     trusted proxy, else the left-most hop, else the peer;
//   - a source that is not the peer is one of the header values, parsed;
//   - a valid source is never an IPv4-mapped IPv6 address.
func FuzzSourceOf(f *testing.F) {
	const lanTrusted = "127.0.0.0/8,::1/128,10.0.0.0/8"
	f.Add("203.0.113.9:5000", "", "198.51.100.1", "198.51.100.2", uint8(fuzzRealIP|fuzzForwardedFor))
	f.Add("127.0.0.1:5000", "", "", "192.0.2.1, 198.51.100.2", uint8(fuzzForwardedFor))
	f.Add("127.0.0.1:5000", "", "198.51.100.1", "192.0.2.7", uint8(fuzzRealIP|fuzzForwardedFor))
	f.Add("127.0.0.1:5000", lanTrusted, "", "198.51.100.9, 203.0.113.5\n10.1.2.3", uint8(fuzzForwardedFor))
	f.Add("10.0.0.2:80", lanTrusted, "", "10.0.0.5, 127.0.0.1", uint8(fuzzForwardedFor))
	f.Add("[::1]:1", "", "", "[2001:db8::7]:443", uint8(fuzzForwardedFor))
	f.Add("[::ffff:127.0.0.1]:1", "", "::ffff:198.51.100.1", "", uint8(fuzzRealIP))
	f.Add("127.0.0.1:1", "", "not-an-ip", "", uint8(fuzzRealIP))
	f.Add("127.0.0.1:1", "", "", " , ", uint8(fuzzForwardedFor))
	f.Add("127.0.0.1:1", "", "", "198.51.100.1, nope", uint8(fuzzForwardedFor))
	f.Add("127.0.0.1", "0.0.0.0/0,::/0", "", "fe80::1%eth0", uint8(fuzzForwardedFor))
	f.Add("@", "", "", "", uint8(0))
	f.Fuzz(func(t *testing.T, peer, trustedList, realIP, forwardedFor string, headers uint8) {
		trusted, err := ParsePrefixes(strings.Split(trustedList, ","))
		if err != nil || trustedList == "" {
			trusted = LoopbackPrefixes
		}
		r := &http.Request{RemoteAddr: peer, Header: http.Header{}}
		if headers&fuzzRealIP != 0 {
			r.Header["X-Real-Ip"] = []string{realIP}
		}
		if headers&fuzzForwardedFor != 0 {
			r.Header["X-Forwarded-For"] = strings.Split(forwardedFor, "\n")
		}

		src, peerTrusted := sourceOf(r, trusted, false)
		p := peerAddr(r)
		if src.IsValid() && src.Is4In6() {
			t.Fatalf("source %s is IPv4-mapped", src)
		}
		if peerTrusted != inPrefixes(trusted, p) {
			t.Fatalf("peer %s: trusted %v, but inPrefixes says %v", p, peerTrusted, !peerTrusted)
		}
		if !peerTrusted {
			if src != p {
				t.Fatalf("untrusted peer %s, but the source is %s", p, src)
			}
			return
		}
		if vals := r.Header.Values("X-Real-Ip"); len(vals) > 0 {
			want, _ := parseHop(vals[len(vals)-1])
			if src != want {
				t.Fatalf("X-Real-IP %q: source %s, want %s", vals[len(vals)-1], src, want)
			}
			return
		}
		var hops []netip.Addr
		for _, v := range r.Header.Values("X-Forwarded-For") {
			for _, h := range strings.Split(v, ",") {
				if strings.TrimSpace(h) != "" {
					a, _ := parseHop(h)
					hops = append(hops, a) // the zero Addr when h is not an address
				}
			}
		}
		if len(hops) == 0 {
			want := p
			if headers&fuzzForwardedFor != 0 {
				want = netip.Addr{} // present but empty
			}
			if src != want {
				t.Fatalf("X-Forwarded-For %q names no hop: source %s, want %s", forwardedFor, src, want)
			}
			return
		}
		// Walk from the right over the trusted proxies. The first hop that
		// is not one decides: an unparsable hop leaves the source unknown,
		// an untrusted one is the source. If there is none, the left-most
		// hop is the source.
		i := len(hops) - 1
		for i > 0 && hops[i].IsValid() && inPrefixes(trusted, hops[i]) {
			i--
		}
		if src != hops[i] {
			t.Fatalf("X-Forwarded-For %q (hops %v, trusted %v): source %s, want hop %d, %s", forwardedFor, hops, trusted, src, i, hops[i])
		}
	})
}
