package agent

import (
	"context"
	"net"
	"net/url"
	"os"
)

// advertiseAddr is the address this agent gives its gang tasks' peers:
// the configured one, else the local address of the route to the first
// coordinator that resolves (the interface the cluster reaches this host
// on), else the host name. Finding the route sends nothing.
func advertiseAddr(ctx context.Context, configured string, coordinators []string) string {
	if configured != "" {
		return configured
	}
	for _, c := range coordinators {
		u, err := url.Parse(c)
		if err != nil || u.Hostname() == "" {
			continue
		}
		var d net.Dialer
		conn, err := d.DialContext(ctx, "udp", net.JoinHostPort(u.Hostname(), "9"))
		if err != nil {
			continue
		}
		local, ok := conn.LocalAddr().(*net.UDPAddr)
		_ = conn.Close()
		if ok {
			return local.IP.String()
		}
	}
	if h, err := os.Hostname(); err == nil {
		return h
	}
	return "127.0.0.1"
}
