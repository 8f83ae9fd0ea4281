package httpapi

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gpulayer/gpulayer/coordinator/artifactrepair"
	"github.com/gpulayer/gpulayer/coordinator/auth"
	"github.com/gpulayer/gpulayer/coordinator/blob"
	"github.com/gpulayer/gpulayer/coordinator/execsession"
	"github.com/gpulayer/gpulayer/coordinator/fsm"
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/internal/clock"
	"github.com/gpulayer/gpulayer/internal/ratelimit"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// Cluster is what the API needs to know about the Raft node.
type Cluster interface {
	ID() string
	IsLeader() bool
	Leader() (addr, id string)
	Peers() ([]api.Peer, error)
	AppliedIndex() uint64
}

// Acquirer hands tasks to workers (the scheduler, on the leader).
type Acquirer interface {
	Acquire(ctx context.Context, workerID string, req api.AcquireRequest) ([]api.Assignment, error)
}

// Leases renews leases on heartbeats (the lease manager, on the leader).
type Leases interface {
	Heartbeat(workerID string, running []string) time.Time
	HeartbeatInterval() time.Duration
	// LastSeen is the leader's last heartbeat from a worker (kept in its
	// memory, not replicated).
	LastSeen(workerID string) (time.Time, bool)
	// Ended forgets the lease of an attempt the state has ended.
	Ended(attemptID string)
}

// Operator performs cluster administration (leader only).
type Operator interface {
	AddVoter(ctx context.Context, id, addr string) error
	RemoveServer(ctx context.Context, id string) error
	Restore(ctx context.Context, r io.Reader, size int64) error
	Barrier(ctx context.Context) error
}

// Snapshots prepares an uploaded snapshot, decoding and checking it once,
// and offers it to the Raft restore that follows (fsm.FSM).
type Snapshots interface {
	Prepare(ra io.ReaderAt, size int64) (*fsm.Prepared, error)
	Offer(p *fsm.Prepared) (withdraw func(), err error)
}

// Config wires the API to the rest of the coordinator.
type Config struct {
	Store   *state.Store
	Cluster Cluster
	Propose state.Proposer
	Sched   Acquirer
	Leases  Leases
	Clock   clock.Clock
	Logger  *slog.Logger
	// Ready reports whether this node, when it leads, has taken office
	// (applied everything before serving).
	Ready func() bool
	// Self describes this coordinator for /v1/status/self.
	Self func() api.SelfResponse
	// Operator performs membership changes and snapshot restores.
	Operator Operator
	// Snapshots prepares uploads for Operator.Restore.
	Snapshots Snapshots
	// CollectGarbage removes the finished jobs due under the retention
	// (olderThan < 0: the configured threshold), returning how many.
	CollectGarbage func(ctx context.Context, by string, olderThan time.Duration) (int, error)
	// ForwardTransport carries requests to other coordinators (forwarded
	// to the leader, artifact copies): TLS with this coordinator's peer
	// certificate, to verified coordinators only.
	ForwardTransport http.RoundTripper
	// IsPeer reports whether a request came on a connection verified as
	// another coordinator's (its peer certificate). Internal routes and
	// forwarded source addresses are taken from peers only. Nil: no
	// request is a peer's.
	IsPeer func(*http.Request) bool
	// HTTPSPeers is set when coordinators serve HTTPS: a peer address
	// that says http:// is then refused, recorded or not.
	HTTPSPeers bool

	// TrustedProxies are the direct peers whose X-Real-IP and
	// X-Forwarded-For are believed (nil: none). Coordinators that forward
	// to each other need not be: they are believed by their verified
	// certificates (IsPeer).
	TrustedProxies []netip.Prefix
	// RequireIPBinding makes a worker enrolled through the allowlist call
	// from inside its cluster's networks, always.
	RequireIPBinding bool
	// RateLimits are the abuse limits (zero values: defaults).
	RateLimits RateLimits
	// AuditFlush is how often coalesced refusals are written to the audit
	// log (default 1 s).
	AuditFlush time.Duration
	// Blobs holds this node's artifact bytes (nil: artifacts refused).
	Blobs *blob.Store
	// Quotas bound each client's jobs; Streams bound log follow streams
	// (zero values: defaults).
	Quotas  Quotas
	Streams StreamLimits
	// PreflightGangs is the cluster's preflight policy: a gang job of at
	// least this many ranks whose tasks ask for GPUs is given preflight
	// at submit (0: only jobs that ask; preflight.go).
	PreflightGangs int
	// Collectors are more metrics for /metrics (the Raft node's).
	Collectors []prometheus.Collector
	// SSO verifies ID tokens for POST /v1/auth/oidc (nil: single sign-on
	// is off and the route answers 404).
	SSO SSO
}

// Server is the HTTP handler of the protocol.
type Server struct {
	store   *state.Store
	cluster Cluster
	propose state.Proposer
	sched   Acquirer
	leases  Leases
	clock   clock.Clock
	log     *slog.Logger
	mux     *http.ServeMux
	metrics *metrics
	routes  []Route
	// apiDoc renders the API description once (apidoc.go).
	apiDoc func() ([]byte, error)

	ready            func() bool
	self             func() api.SelfResponse
	operator         Operator
	snapshots        Snapshots
	restoreMu        sync.Mutex // one operator restore at a time (fsm.Offer)
	collectGarbage   func(ctx context.Context, by string, olderThan time.Duration) (int, error)
	forwardTransport http.RoundTripper
	proxies          proxies
	isPeer           func(*http.Request) bool
	httpsPeers       bool
	inflight         inflightBytes

	trusted        []netip.Prefix
	authn          auth.Authenticator
	limits         *limiters
	audit          *auditSink
	blobs          *blob.Store
	repair         *artifactrepair.Repair // this coordinator's artifact copies (artifactrepair.go)
	polls          *longPolls
	quotas         Quotas
	preflightGangs int // Config.PreflightGangs
	streams        StreamLimits
	sso            SSO
	// execs are the exec sessions open on this node (exec.go), execLimit
	// bounds how fast one credential opens them.
	execs     *execsession.Registry
	execLimit *ratelimit.Keyed
}

var _ http.Handler = (*Server)(nil)

// New builds the handler.
func New(cfg Config) *Server {
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{
		store:   cfg.Store,
		cluster: cfg.Cluster,
		propose: cfg.Propose,
		sched:   cfg.Sched,
		leases:  cfg.Leases,
		clock:   cfg.Clock,
		log:     cfg.Logger.With("component", "http"),
		mux:     http.NewServeMux(),
	}
	s.ready = cfg.Ready
	if s.ready == nil {
		s.ready = func() bool { return true }
	}
	s.self = cfg.Self
	s.operator = cfg.Operator
	s.snapshots = cfg.Snapshots
	s.collectGarbage = cfg.CollectGarbage
	s.forwardTransport = cfg.ForwardTransport
	if s.forwardTransport == nil {
		s.forwardTransport = http.DefaultTransport
	}
	s.isPeer = cfg.IsPeer
	if s.isPeer == nil {
		s.isPeer = func(*http.Request) bool { return false }
	}
	s.httpsPeers = cfg.HTTPSPeers
	s.trusted = cfg.TrustedProxies
	s.authn = auth.Authenticator{Creds: cfg.Store, RequireIPBinding: cfg.RequireIPBinding}
	s.limits = newLimiters(cfg.RateLimits)
	s.audit = newAuditSink(cfg.Propose, cfg.Clock, s.log, cfg.AuditFlush)
	s.blobs = cfg.Blobs
	var blobs artifactrepair.Blobs // nil, not a nil *blob.Store, when none is kept
	if cfg.Blobs != nil {
		blobs = cfg.Blobs
	}
	s.repair = artifactrepair.New(blobs, cfg.Store, repairPeers{s}, cfg.Propose, s.now, s.log.With("component", "artifact-repair"))
	s.quotas = cfg.Quotas.withDefaults()
	s.preflightGangs = cfg.PreflightGangs
	s.streams = cfg.Streams.withDefaults()
	s.sso = cfg.SSO
	s.execs = execsession.New(cfg.Clock, execsession.Limits{})
	s.execLimit = ratelimit.New(orDefault(cfg.RateLimits.ExecRate, DefaultExecRate), orDefaultInt(cfg.RateLimits.ExecBurst, DefaultExecBurst), 0)
	s.polls = newLongPolls(api.MaxLongPollsPerCredential)
	s.metrics = newMetrics(s, cfg.Collectors)
	s.routes = s.routeTable()
	s.apiDoc = sync.OnceValues(s.renderAPI)
	for _, rt := range s.routes {
		s.mux.Handle(rt.Method+" "+rt.Pattern, s.wrap(rt))
	}
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, newError(api.CodeNotFound, "no route for %s %s", r.Method, r.URL.Path))
	})
	return s
}

// Run writes coalesced audit events until ctx ends.
func (s *Server) Run(ctx context.Context) { s.audit.run(ctx) }

// Routes returns the route table (for the credential matrix test).
func (s *Server) Routes() []Route { return s.routes }

// ServeHTTP runs the middleware chain and the mux.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.serve(w, r)
}

func (s *Server) now() time.Time { return s.clock.Now().UTC() }

func (s *Server) leaderHTTP() string {
	_, id := s.cluster.Leader()
	if id == "" {
		return ""
	}
	return s.store.NodeHTTPAddr(id)
}
