package coordinator

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/gpulayer/gpulayer/internal/clock"
)

// Config describes one coordinator.
type Config struct {
	// NodeID is the Raft server id; defaults to the Raft address.
	NodeID   string
	DataDir  string
	HTTPAddr string
	RaftAddr string
	// TLSCert and TLSKey enable HTTPS (TLS 1.2 minimum).
	TLSCert string
	TLSKey  string
	// AllowInsecureRemote permits plaintext HTTP on a non-loopback address.
	AllowInsecureRemote bool

	// HeartbeatInterval is what agents are told to use (default 2 s).
	HeartbeatInterval time.Duration
	// LeaseGrace is added to every timer re-armed on gaining leadership.
	LeaseGrace time.Duration
	// LeaseTick is how often lease deadlines are checked.
	LeaseTick time.Duration

	// Raft timeouts; zero takes the cluster package's LAN defaults.
	RaftHeartbeatTimeout time.Duration
	RaftElectionTimeout  time.Duration

	Logger *slog.Logger
	Clock  clock.Clock
}

// ErrInsecureRemote refuses plaintext on a non-loopback address.
var ErrInsecureRemote = errors.New("refusing plaintext HTTP on a non-loopback address: give --tls-cert/--tls-key, or --allow-insecure-remote")

func (c *Config) validate() error {
	if c.DataDir == "" || c.HTTPAddr == "" || c.RaftAddr == "" {
		return errors.New("coordinator: data dir, HTTP address and Raft address are required")
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return errors.New("coordinator: --tls-cert and --tls-key go together")
	}
	if c.TLSCert == "" && !c.AllowInsecureRemote {
		loop, err := isLoopback(c.HTTPAddr)
		if err != nil {
			return err
		}
		if !loop {
			return ErrInsecureRemote
		}
	}
	if c.NodeID == "" {
		c.NodeID = c.RaftAddr
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Clock == nil {
		c.Clock = clock.Real{}
	}
	return nil
}

// isLoopback reports whether a listen address binds only loopback.
func isLoopback(addr string) (bool, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false, fmt.Errorf("coordinator: address %q: %w", addr, err)
	}
	if host == "localhost" {
		return true, nil
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback(), nil
}
