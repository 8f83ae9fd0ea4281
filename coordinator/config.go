package coordinator

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/cluster"
	"github.com/gpulayer/gpulayer/coordinator/httpapi"
	"github.com/gpulayer/gpulayer/coordinator/migauto"
	"github.com/gpulayer/gpulayer/coordinator/oidc"
	"github.com/gpulayer/gpulayer/coordinator/preempt"
	"github.com/gpulayer/gpulayer/internal/certs"
	"github.com/gpulayer/gpulayer/internal/clock"
)

// Config describes one coordinator.
type Config struct {
	// NodeID is the Raft server id; defaults to the Raft address.
	NodeID   string
	DataDir  string
	HTTPAddr string
	RaftAddr string
	// RaftInProcess runs Raft with no port at all (cluster.Config.
	// InProcess): for a coordinator that will never have peers, gpulayer
	// dev's. RaftAddr is then not needed; NodeID is.
	RaftInProcess bool
	// TLSCert and TLSKey enable HTTPS (TLS 1.2 minimum).
	TLSCert string
	TLSKey  string
	// AllowInsecureRemote permits plaintext HTTP on a non-loopback address.
	AllowInsecureRemote bool
	// ClientCAFile, when set, makes the coordinator require a client
	// certificate signed by one of its CAs on every connection (mTLS). It
	// needs TLSCert.
	ClientCAFile string

	// RaftTLSCert, RaftTLSKey and RaftCAFile turn on mutual TLS between
	// coordinators, for Raft and for HTTP calls between them (forwarding,
	// formation, artifact relay). The certificate must carry the DNS name
	// server.<ClusterName>.gpulayer and both the serverAuth and clientAuth
	// usages (`gpulayer tls cert create --server` makes one); a peer is
	// accepted only if its certificate chains to RaftCAFile and carries
	// that name.
	RaftTLSCert string
	RaftTLSKey  string
	RaftCAFile  string
	// ClusterName picks the server identity peers verify (default
	// "global").
	ClusterName string
	// AllowInsecureRaft permits Raft on a non-loopback address without
	// operator certificates, authenticated by the cluster key alone (labs
	// only; logged as a warning at start).
	AllowInsecureRaft bool
	// ClusterKeyFile is the cluster key coordinators without RaftTLSCert
	// authenticate each other with (default: cluster.key in the data dir,
	// made at first start by a coordinator that forms a cluster alone).
	// ClusterKey, when set, is the key itself (tests).
	ClusterKeyFile string
	ClusterKey     []byte

	// TrustedProxyCIDRs are the direct peers whose X-Real-IP and
	// X-Forwarded-For are believed (nil or "none": none, the default).
	// The other coordinators need not be in it: a request they forward is
	// believed by their verified certificate.
	TrustedProxyCIDRs []string
	// RequireIPBinding makes a worker enrolled through the allowlist call
	// from inside its cluster's networks on every request.
	RequireIPBinding bool
	// RateLimits are the abuse limits; zero values take the defaults.
	RateLimits httpapi.RateLimits
	// RateLimitExemptCIDRs are source networks never rate limited (nil:
	// loopback; empty: none).
	RateLimitExemptCIDRs []string
	// AuditFlush is how often coalesced refusals reach the audit log.
	AuditFlush time.Duration
	// Quotas bound each client's jobs; Streams bound log follow streams
	// (zero values: the httpapi defaults).
	Quotas  httpapi.Quotas
	Streams httpapi.StreamLimits

	// HTTPAdvertise is the URL other coordinators and clients use to reach
	// this one (default: derived from the bound address).
	HTTPAdvertise string
	// RaftAdvertise is the Raft address peers dial (default: RaftAddr).
	RaftAdvertise string
	// BootstrapExpect is the number of servers that form a new cluster
	// together; 0 or 1 with no Join forms a one-node cluster.
	BootstrapExpect int
	// Join lists other coordinators' HTTP URLs, used to find the founding
	// members when BootstrapExpect > 1.
	Join []string
	// BootstrapFile is where init's credential hashes are read from
	// (default: the data dir's bootstrap-credentials.json).
	BootstrapFile string
	// RaftDial replaces Raft's TCP dialer (tests inject faults here).
	RaftDial cluster.DialFunc
	// RaftStores wraps the stores Raft writes to (tests inject disk faults
	// here).
	RaftStores func(cluster.Stores) cluster.Stores

	// HeartbeatInterval is what agents are told to use (default 2 s).
	HeartbeatInterval time.Duration
	// LeaseGrace is added to every timer re-armed on gaining leadership.
	LeaseGrace time.Duration
	// LeaseTick is how often lease deadlines are checked.
	LeaseTick time.Duration
	// Retention bounds how long finished jobs are kept (zero fields take
	// the defaults: 4 h, 50,000 jobs, collected every 5 min).
	Retention Retention

	// Raft timeouts; zero takes the cluster package's LAN defaults. The
	// leader lease may not exceed the heartbeat timeout.
	RaftHeartbeatTimeout   time.Duration
	RaftElectionTimeout    time.Duration
	RaftLeaderLeaseTimeout time.Duration
	// RaftSnapshotThreshold and RaftSnapshotInterval tune log compaction;
	// zero takes the defaults.
	RaftSnapshotThreshold uint64
	RaftSnapshotInterval  time.Duration

	// Preemption tunes the leader's preemption loop (docs/preemption.md):
	// its minimum runtime, how often it looks, or that it is off.
	Preemption preempt.Config
	// PreflightGangs turns preflight on for every gang job of at least
	// this many ranks whose tasks ask for GPUs (0: only the jobs that
	// ask for it).
	PreflightGangs int

	// MIGAuto is the MIG auto mode (coordinator/migauto): Cluster turns
	// it on for every worker not labelled gpulayer.io/mig-auto=off;
	// workers labelled =on take part either way.
	MIGAuto migauto.Settings

	// OIDC turns on single sign-on (POST /v1/auth/oidc) when its issuer,
	// audience and mappings are set; see docs/sso.md.
	OIDC oidc.Config

	Logger *slog.Logger
	Clock  clock.Clock
}

// ErrInsecureRaft refuses plaintext Raft on a non-loopback address.
var ErrInsecureRaft = errors.New("refusing plaintext Raft on a non-loopback address: anyone who reaches it can replace the cluster's state; give --raft-tls-cert, --raft-tls-key and --raft-ca, or --allow-insecure-raft")

// ErrInsecureRemote refuses plaintext on a non-loopback address.
var ErrInsecureRemote = errors.New("refusing plaintext HTTP on a non-loopback address: give --tls-cert/--tls-key, or --allow-insecure-remote")

func (c *Config) validate() error {
	if c.DataDir == "" || c.HTTPAddr == "" || (c.RaftAddr == "" && !c.RaftInProcess) {
		return errors.New("coordinator: data dir, HTTP address and Raft address are required")
	}
	if c.RaftInProcess && (c.NodeID == "" || c.BootstrapExpect > 1 || len(c.Join) > 0) {
		return errors.New("coordinator: in-process Raft is for one coordinator alone, with a node id")
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return errors.New("coordinator: --tls-cert and --tls-key go together")
	}
	if c.ClientCAFile != "" && c.TLSCert == "" {
		return errors.New("coordinator: --client-ca needs --tls-cert and --tls-key (client certificates are a TLS feature)")
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
	if err := c.validateRaftTLS(); err != nil {
		return err
	}
	if err := c.OIDC.Validate(); err != nil {
		return fmt.Errorf("coordinator: %w", err)
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

// validateRaftTLS checks the Raft TLS files go together and that Raft is
// plaintext only on loopback (or when explicitly allowed).
func (c *Config) validateRaftTLS() error {
	if c.ClusterName == "" {
		c.ClusterName = certs.DefaultCluster
	}
	if err := certs.ValidateCluster(c.ClusterName); err != nil {
		return fmt.Errorf("coordinator: --cluster-name: %w", err)
	}
	set := 0
	for _, f := range []string{c.RaftTLSCert, c.RaftTLSKey, c.RaftCAFile} {
		if f != "" {
			set++
		}
	}
	switch {
	case set == 3:
		return nil
	case set != 0:
		return errors.New("coordinator: --raft-tls-cert, --raft-tls-key and --raft-ca go together")
	case c.AllowInsecureRaft:
		return nil
	}
	for _, addr := range []string{c.RaftAddr, c.RaftAdvertise} {
		if addr == "" {
			continue
		}
		loop, err := isLoopback(addr)
		if err != nil {
			return err
		}
		if !loop {
			return fmt.Errorf("coordinator: %s: %w", addr, ErrInsecureRaft)
		}
	}
	return nil
}

// raftTLS reports whether Raft runs over mutual TLS.
func (c *Config) raftTLS() bool { return c.RaftTLSCert != "" }

// parseCIDRFlag parses a list of CIDRs given to a flag. Nil stays nil (the
// default applies); "none" entries are dropped, so ["none"] means an empty
// list.
func parseCIDRFlag(flag string, in []string) ([]netip.Prefix, error) {
	if in == nil {
		return nil, nil
	}
	var keep []string
	for _, c := range in {
		if c != "none" {
			keep = append(keep, c)
		}
	}
	out, err := httpapi.ParsePrefixes(keep)
	if err != nil {
		return nil, fmt.Errorf("coordinator: %s: %w", flag, err)
	}
	if out == nil {
		out = []netip.Prefix{}
	}
	return out, nil
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
