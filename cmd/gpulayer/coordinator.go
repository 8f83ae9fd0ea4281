package main

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpulayer/gpulayer/coordinator"
	"github.com/gpulayer/gpulayer/coordinator/httpapi"
	"github.com/gpulayer/gpulayer/coordinator/migauto"
	"github.com/gpulayer/gpulayer/coordinator/oidc"
	"github.com/gpulayer/gpulayer/coordinator/sched/preemption"
	"github.com/gpulayer/gpulayer/internal/certs"
)

// nonNilList splits a comma-separated flag; an empty flag is an empty,
// not a nil, list (nil would mean "the default").
func nonNilList(s string) []string {
	l := splitList(s)
	if l == nil {
		return []string{}
	}
	return l
}

func coordinatorCmd() *cobra.Command {
	return group("coordinator", "run or initialise a coordinator",
		"  gpulayer coordinator init --data-dir /var/lib/gpulayer/c1\n  gpulayer coordinator run --data-dir /var/lib/gpulayer/c1",
		coordinatorInitCmd(), coordinatorRunCmd())
}

func coordinatorInitCmd() *cobra.Command {
	var dataDir string
	var asJSON, rotate bool
	cmd := &cobra.Command{
		Use:   "init [flags] --data-dir DIR",
		Short: "mint the first admin and join tokens",
		Long: `init mints the first admin and join tokens and prints them, once: only
their hashes are stored, in the data dir.`,
		Example: "  gpulayer coordinator init --data-dir /var/lib/gpulayer/c1\n  gpulayer coordinator init --data-dir /var/lib/gpulayer/c1 --rotate --json",
		Args:    noArgs,
		RunE: func(*cobra.Command, []string) error {
			if dataDir == "" {
				return usagef("--data-dir is required")
			}
			toks, err := coordinator.Init(dataDir, rotate, time.Now())
			if err != nil {
				return err
			}
			if asJSON {
				return json.NewEncoder(os.Stdout).Encode(toks)
			}
			fmt.Printf("admin token: %s\njoin token:  %s\n\nThese are shown once; only their hashes are stored in %s.\n", toks.AdminToken, toks.JoinToken, dataDir)
			if rotate {
				fmt.Println("Every earlier client, join and instance token stops working within a second on a running leader whose data dir (or --bootstrap-file) holds this file; copy it to every coordinator. Worker credentials are untouched.")
			}
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&dataDir, "data-dir", "", "coordinator data directory (required)")
	fs.BoolVar(&asJSON, "json", false, `print {"admin_token": …, "join_token": …}`)
	fs.BoolVar(&rotate, "rotate", false, "replace every client and join token")
	return cmd
}

func coordinatorRunCmd() *cobra.Command {
	var cfg coordinator.Config
	var lf logFlags
	var join, trusted, exempt string
	var oidcMaps []string
	cmd := &cobra.Command{
		Use:   "run [flags] --data-dir DIR",
		Short: "run a coordinator",
		Example: `  gpulayer coordinator run --data-dir /var/lib/gpulayer/c1 --http-addr 127.0.0.1:7070 --raft-addr 127.0.0.1:7071
  gpulayer coordinator run --config /etc/gpulayer/coordinator.toml
  gpulayer coordinator run --data-dir /data --bootstrap-expect 3 --join https://c2:7070,https://c3:7070 \
      --tls-cert c1.pem --tls-key c1-key.pem --raft-tls-cert c1.pem --raft-tls-key c1-key.pem --raft-ca gpulayer-ca.pem`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.Join = splitList(join)
			if cfg.Preemption.Options.MinRuntime == 0 { // the flag's 0s means none; the config's zero, the default
				cfg.Preemption.Options.MinRuntime = -1
			}
			cfg.TrustedProxyCIDRs = nonNilList(trusted)
			cfg.RateLimitExemptCIDRs = nonNilList(exempt)
			for _, m := range oidcMaps {
				mp, err := oidc.ParseMapping(m)
				if err != nil {
					return usageError{err}
				}
				cfg.OIDC.Mappings = append(cfg.OIDC.Mappings, mp)
			}
			cfg.Logger = lf.logger()
			srv, err := coordinator.New(cfg)
			if err != nil {
				return err
			}
			return srv.Run(cmd.Context())
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&cfg.DataDir, "data-dir", "", "coordinator data directory (required)")
	fs.StringVar(&cfg.HTTPAddr, "http-addr", "127.0.0.1:7070", "HTTP listen address")
	fs.StringVar(&cfg.RaftAddr, "raft-addr", "127.0.0.1:7071", "Raft listen address")
	fs.StringVar(&cfg.NodeID, "node-id", "", "Raft server id (default: the Raft address)")
	fs.StringVar(&cfg.TLSCert, "tls-cert", "", "TLS certificate (PEM)")
	fs.StringVar(&cfg.TLSKey, "tls-key", "", "TLS private key (PEM)")
	fs.BoolVar(&cfg.AllowInsecureRemote, "allow-insecure-remote", false, "allow plaintext HTTP on a non-loopback address")
	fs.DurationVar(&cfg.HeartbeatInterval, "heartbeat-interval", 2*time.Second, "heartbeat interval agents are told to use")
	fs.IntVar(&cfg.PreflightGangs, "preflight-gangs", 0, "check the GPUs of every gang job of at least this many ranks (whose tasks ask for GPUs) before it meets, as its preflight field does; 0: only the jobs that ask")
	fs.BoolVar(&cfg.MIGAuto.Cluster, "mig-auto", false, "repartition an idle MIG-capable GPU when tasks wait for a MIG profile no GPU offers, on every worker not labelled gpulayer.io/mig-auto=off (workers labelled =on take part without it)")
	fs.DurationVar(&cfg.MIGAuto.Window, "mig-auto-window", migauto.DefaultWindow, "how long a MIG profile's demand must last before the auto mode repartitions a GPU for it")
	fs.DurationVar(&cfg.MIGAuto.MinInterval, "mig-auto-min-interval", migauto.DefaultMinInterval, "how long the auto mode leaves a GPU alone after its last MIG layout request")
	fs.DurationVar(&cfg.Retention.Threshold, "job-gc-threshold", coordinator.DefaultJobGCThreshold, "finished jobs older than this are removed, with their tasks, output and idempotency keys")
	fs.IntVar(&cfg.Retention.Keep, "job-gc-keep", coordinator.DefaultJobGCKeep, "at most this many finished jobs are kept (the newest)")
	fs.DurationVar(&cfg.Retention.Interval, "job-gc-interval", coordinator.DefaultJobGCInterval, "how often the leader removes finished jobs past the retention")
	fs.DurationVar(&cfg.Preemption.Options.MinRuntime, "preempt-min-runtime", preemption.DefaultMinRuntime, "an attempt runs at least this long before it may be preempted (the storm guard; 0s: no minimum)")
	fs.BoolVar(&cfg.Preemption.Disabled, "no-preemption", false, "never preempt running tasks for waiting ones")
	fs.StringVar(&cfg.HTTPAdvertise, "http-advertise", "", "URL peers and clients use to reach this coordinator (default: from --http-addr)")
	fs.StringVar(&cfg.RaftAdvertise, "raft-advertise", "", "Raft address peers dial (default: --raft-addr)")
	fs.IntVar(&cfg.BootstrapExpect, "bootstrap-expect", 0, "servers that form a new cluster together (3 in production)")
	fs.StringVar(&join, "join", "", "other coordinators' URLs, comma separated, for forming a new cluster")
	fs.StringVar(&cfg.BootstrapFile, "bootstrap-file", "", "credential hashes from `coordinator init` (default: in --data-dir)")
	fs.StringVar(&cfg.ClientCAFile, "client-ca", "", "require client certificates signed by these CAs (PEM) on every connection (mTLS; needs --tls-cert)")
	fs.StringVar(&cfg.RaftTLSCert, "raft-tls-cert", "", "certificate for mutual TLS between coordinators (Raft and forwarding); must carry server.<cluster-name>.gpulayer (`gpulayer tls cert create --server`)")
	fs.StringVar(&cfg.RaftTLSKey, "raft-tls-key", "", "key of --raft-tls-cert")
	fs.StringVar(&cfg.RaftCAFile, "raft-ca", "", "CA bundle (PEM) a peer coordinator's certificate must chain to")
	fs.StringVar(&cfg.ClusterName, "cluster-name", certs.DefaultCluster, "cluster name: peers must show server.<cluster-name>.gpulayer")
	fs.BoolVar(&cfg.AllowInsecureRaft, "allow-insecure-raft", false, "allow Raft on a non-loopback address without --raft-tls-* certificates, authenticated by the cluster key alone (isolated labs only)")
	fs.StringVar(&cfg.ClusterKeyFile, "cluster-key-file", "", "shared secret coordinators without --raft-tls-* authenticate each other with (default: cluster.key in --data-dir, made by a coordinator that forms a cluster alone)")
	// Coordinators call each other with their peer certificates now: these
	// no longer do anything, and say so when given.
	var obsolete string
	for _, name := range []string{"ca-file", "client-cert", "client-key"} {
		fs.StringVar(&obsolete, name, "", "obsolete")
		_ = fs.MarkDeprecated(name, "coordinators call each other with their peer certificates (--raft-tls-* or the cluster key); this flag is ignored")
	}
	fs.StringVar(&trusted, "trusted-proxy-cidrs", "none", "reverse proxies whose X-Real-IP / X-Forwarded-For are believed, comma separated CIDRs (\"none\": no proxy, the default; the other coordinators are believed by their certificates and need no entry)")
	fs.BoolVar(&cfg.RequireIPBinding, "require-ip-binding", false, "workers enrolled through the allowlist must always call from inside their cluster's networks")
	fs.Float64Var(&cfg.RateLimits.SourceRate, "rate-limit-source", httpapi.DefaultSourceRate, "requests per second per source address (IPv6: per /64); negative: no limit")
	fs.IntVar(&cfg.RateLimits.SourceBurst, "rate-limit-source-burst", httpapi.DefaultSourceBurst, "burst per source address")
	fs.Float64Var(&cfg.RateLimits.PrincipalRate, "rate-limit-principal", httpapi.DefaultPrincipalRate, "requests per second per credential; negative: no limit")
	fs.IntVar(&cfg.RateLimits.PrincipalBurst, "rate-limit-principal-burst", httpapi.DefaultPrincipalBurst, "burst per credential")
	fs.Float64Var(&cfg.RateLimits.RegisterRate, "rate-limit-register", httpapi.DefaultRegisterRate, "worker registrations and enrollments per second per source address; negative: no limit")
	fs.IntVar(&cfg.RateLimits.RegisterBurst, "rate-limit-register-burst", httpapi.DefaultRegisterBurst, "burst of registrations per source address")
	fs.StringVar(&exempt, "rate-limit-exempt-cidrs", "127.0.0.0/8,::1/128", "source networks never rate limited (\"none\": none)")
	// Quotas and stream limits (docs/protocol.md, "Quotas").
	fs.IntVar(&cfg.Quotas.MaxPendingJobs, "max-pending-jobs", httpapi.DefaultMaxPendingJobs, "jobs one client token name may have that have not ended; negative: no quota")
	fs.IntVar(&cfg.Quotas.MaxJobBytes, "max-job-bytes", httpapi.DefaultMaxJobBytes, "largest job spec, as JSON, one submission may carry; negative: no quota")
	fs.Int64Var(&cfg.Quotas.MaxArtifactBytes, "max-artifact-bytes", httpapi.DefaultMaxArtifactBytes, "artifact bytes each credential may keep uploaded (artifacts it uploaded first, until collected); negative: no bound")
	fs.IntVar(&cfg.Quotas.MaxOutputBytes, "max-output-bytes", httpapi.DefaultMaxOutputBytes, "task output all jobs together keep on each coordinator's disk (each task is also bounded at 8 MiB); past it a task's further output is dropped after a marker line; negative: no bound")
	fs.DurationVar(&cfg.Streams.WriteTimeout, "stream-write-timeout", httpapi.DefaultStreamWriteTimeout, "a following log stream whose client takes longer than this to accept one write is closed")
	fs.DurationVar(&cfg.Streams.MaxLife, "stream-max-life", httpapi.DefaultStreamMaxLife, "longest a following log stream stays open (clients reconnect)")
	// Single sign-on (docs/sso.md).
	fs.StringVar(&cfg.OIDC.Issuer, "oidc-issuer", "", "OpenID Connect issuer URL whose ID tokens POST /v1/auth/oidc exchanges for client tokens (https; http on loopback only)")
	fs.StringVar(&cfg.OIDC.Audience, "oidc-audience", "", "client id the ID tokens must be issued to (the CLI's client at the provider)")
	fs.StringVar(&cfg.OIDC.Claim, "oidc-claim", oidc.DefaultClaim, "ID token claim mapped to team and roles (a string or a list of strings)")
	fs.StringArrayVar(&oidcMaps, "oidc-map", nil, "VALUE=TEAM:ROLE[+ROLE]: a subject whose claim holds VALUE gets TEAM with these roles (read, submit, admin); repeatable; the first match in order picks the team, matches of that team add their roles")
	lf.register(fs)
	takesConfigFile(cmd)
	return cmd
}
