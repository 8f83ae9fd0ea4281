package httpapi

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// The source address of a request is the address of the connection's
// peer, unless that peer is a trusted proxy (--trusted-proxy-cidrs, none
// by default) or another coordinator of the cluster. A trusted proxy's word is taken: X-Real-IP if
// present, else the right-most X-Forwarded-For hop that is not itself a
// trusted proxy (every X-Forwarded-For header, in order, is one list). If
// every hop is a trusted proxy, the left-most is the source. A header from
// a trusted proxy that names no valid address leaves the source unknown
// (the zero Addr); enrollment answers that with 400. Addresses in request
// bodies are never used.
//
// A coordinator that forwards a request to the leader replaces those
// headers with the one address it determined (forward.go), so the leader,
// which believes a verified peer (its certificate, not its address), sees
// the original client and nothing a client could have written.

// LoopbackPrefixes are 127.0.0.0/8 and ::1: the networks never rate
// limited unless configured otherwise (RateLimits.Exempt). No proxy is
// trusted unless configured (Config.TrustedProxies): a process on the
// coordinator's host could otherwise choose the source address that rate
// limits and enrollment allowlists go by.
var LoopbackPrefixes = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}

// ParsePrefixes parses CIDRs (a bare address is its /32 or /128).
func ParsePrefixes(cidrs []string) ([]netip.Prefix, error) {
	out := make([]netip.Prefix, 0, len(cidrs))
	for _, c := range cidrs {
		c = strings.TrimSpace(c)
		if c == "" {
			continue
		}
		p, err := netip.ParsePrefix(c)
		if err != nil {
			a, aerr := netip.ParseAddr(c)
			if aerr != nil {
				return nil, err
			}
			p = netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen())
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

func inPrefixes(ps []netip.Prefix, a netip.Addr) bool {
	if !a.IsValid() {
		return false
	}
	a = a.Unmap()
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// peerAddr is the address of the connection's other end.
func peerAddr(r *http.Request) netip.Addr {
	if ap, err := netip.ParseAddrPort(r.RemoteAddr); err == nil {
		return ap.Addr().Unmap()
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	a, _ := netip.ParseAddr(host)
	return a.Unmap()
}

// parseHop parses one forwarding-header value: an address, optionally
// with a port or in brackets.
func parseHop(s string) (netip.Addr, bool) {
	s = strings.TrimSpace(s)
	if a, err := netip.ParseAddr(s); err == nil {
		return a.Unmap(), true
	}
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap(), true
	}
	if a, err := netip.ParseAddr(strings.Trim(s, "[]")); err == nil {
		return a.Unmap(), true
	}
	return netip.Addr{}, false
}

// sourceOf determines a request's source address and whether its direct
// peer is a trusted proxy: one in the trusted networks, or a coordinator
// whose certificate was verified (coordinator reports that).
func sourceOf(r *http.Request, trusted []netip.Prefix, coordinator bool) (src netip.Addr, peerTrusted bool) {
	peer := peerAddr(r)
	if !coordinator && !inPrefixes(trusted, peer) {
		return peer, false
	}
	if vals := r.Header.Values("X-Real-Ip"); len(vals) > 0 {
		a, ok := parseHop(vals[len(vals)-1])
		if !ok {
			return netip.Addr{}, true
		}
		return a, true
	}
	var hops []string
	for _, v := range r.Header.Values("X-Forwarded-For") {
		for _, h := range strings.Split(v, ",") {
			if h = strings.TrimSpace(h); h != "" {
				hops = append(hops, h)
			}
		}
	}
	if len(hops) == 0 {
		if len(r.Header.Values("X-Forwarded-For")) > 0 {
			return netip.Addr{}, true // present but empty
		}
		return peer, true
	}
	var a netip.Addr
	for i := len(hops) - 1; i >= 0; i-- {
		var ok bool
		if a, ok = parseHop(hops[i]); !ok {
			return netip.Addr{}, true
		}
		if !inPrefixes(trusted, a) {
			return a, true
		}
	}
	return a, true // every hop is a trusted proxy: the left-most
}

// reqInfo is what the outer middleware learns about a request.
type reqInfo struct {
	id          string
	source      netip.Addr
	peerTrusted bool
	// peer: the request came from another coordinator of the cluster,
	// verified by its certificate.
	peer bool
}

const reqInfoKey ctxKey = iota + 1

func withInfo(ctx context.Context, ri *reqInfo) context.Context {
	return context.WithValue(ctx, reqInfoKey, ri)
}

func infoOf(r *http.Request) *reqInfo {
	if ri, ok := r.Context().Value(reqInfoKey).(*reqInfo); ok {
		return ri
	}
	return &reqInfo{}
}

// source is the request's source address (zero when unknown).
func source(r *http.Request) netip.Addr { return infoOf(r).source }

// sourceString renders the source for logs and audit events.
func sourceString(r *http.Request) string {
	if a := source(r); a.IsValid() {
		return a.String()
	}
	return ""
}

// sourceKey is the rate-limit key of an address: IPv4 addresses alone,
// IPv6 addresses by their /64, since one host commonly holds a whole /64.
func sourceKey(a netip.Addr) string {
	switch {
	case !a.IsValid():
		return "unknown"
	case a.Is6():
		p, _ := a.Prefix(64)
		return p.String()
	}
	return a.String()
}
