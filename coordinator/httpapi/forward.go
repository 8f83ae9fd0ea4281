package httpapi

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"strings"
	"sync"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/cluster"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// ForwardedHeader marks a request one coordinator forwarded to another, so
// a request is forwarded at most once.
const ForwardedHeader = "X-GpuLayer-Forwarded-By"

// ArtifactLocalHeader asks a coordinator to serve an artifact read from
// its own data dir, or to store an upload in it, instead of forwarding
// it. The leader sets it when it fetches a blob it does not hold from a
// coordinator that does, and when it has a second coordinator store a
// copy; it is honoured only from another coordinator, verified by its
// peer certificate.
const ArtifactLocalHeader = "X-GpuLayer-Artifact-Local"

// AppliedIndexHeader carries the leader's applied Raft index on a copy it
// asks another coordinator to store: that coordinator authenticates the
// request only once it has applied as much (so that a credential created
// just before the upload is known there too), or after a short wait.
const AppliedIndexHeader = "X-GpuLayer-Applied-Index"

// local reports whether a request is always answered by the node it
// reaches.
func local(r *http.Request) bool {
	path := r.URL.Path
	if strings.HasPrefix(path, "/v1/status/") || strings.HasPrefix(path, "/v1/operator/local/") || path == "/metrics" || path == "/v1/openapi.json" ||
		path == "/ui" || strings.HasPrefix(path, "/ui/") {
		return true
	}
	return isArtifactCopy(r)
}

// isArtifactCopy reports whether r is one coordinator asking another for
// its own copy of an artifact: a read served from this node's disk (the
// leader fetching bytes it lacks) or a write stored on it (the leader
// making a second copy). Only a verified coordinator may ask.
func isArtifactCopy(r *http.Request) bool {
	return (r.Method == http.MethodGet || r.Method == http.MethodPut) && strings.HasPrefix(r.URL.Path, "/v1/artifacts/") &&
		r.Header.Get(ArtifactLocalHeader) != "" && infoOf(r).peer
}

// route decides where a request is served: here (leader that has taken
// office, or a local path), forwarded to the leader, or refused with
// no_leader / not_leader. It reports whether it answered the request.
func (s *Server) route(w http.ResponseWriter, r *http.Request) bool {
	if local(r) {
		return false
	}
	if s.cluster.IsLeader() {
		if !s.ready() {
			s.writeError(w, r, newError(api.CodeNoLeader, "this coordinator was just elected and is catching up; retry"))
			return true
		}
		return false
	}
	leader := s.leaderHTTP()
	if r.Header.Get(ForwardedHeader) != "" {
		// Forwarded by a node that thought we lead: let the client go to
		// the leader itself.
		s.writeError(w, r, newError(api.CodeNotLeader, "this coordinator is not the leader"))
		return true
	}
	if leader == "" {
		// Answered at once (with Retry-After): without a quorum no leader
		// will come soon, and a client tries its other addresses.
		s.writeError(w, r, newError(api.CodeNoLeader, "coordinator %s knows no leader: the cluster has no quorum, or is electing a leader; retry", s.cluster.ID()))
		return true
	}
	proxy, err := s.proxyTo(leader)
	if err != nil {
		s.writeError(w, r, err)
		return true
	}
	r.Header.Set(ForwardedHeader, s.cluster.ID())
	switch {
	case strings.HasSuffix(r.URL.Path, "/logs") && r.Method == http.MethodGet:
		// A following log stream outlives the write timeout; the leader
		// bounds everything else it relays.
		_ = http.NewResponseController(w).SetWriteDeadline(time.Time{})
	case isExecStream(r):
		// An exec session lasts as long as its command, once the leader
		// took it (forward_exec.go).
		w = &execStreamWriter{ResponseWriter: w}
	case strings.HasPrefix(r.URL.Path, "/v1/artifacts/"):
		// Artifact bytes take longer than a JSON call, both ways.
		rc := http.NewResponseController(w)
		_ = rc.SetReadDeadline(time.Now().Add(artifactTransfer))
		_ = rc.SetWriteDeadline(time.Now().Add(artifactTransfer))
	}
	proxy.ServeHTTP(w, r)
	return true
}

// isExecStream reports whether r attaches to an exec session (a client's
// or an agent's end), which the leader holds as long as the command runs.
func isExecStream(r *http.Request) bool {
	return strings.HasPrefix(r.URL.Path, "/v1/exec/") || strings.HasPrefix(r.URL.Path, "/v1/workers/self/exec/")
}

// forwardSource replaces the forwarding headers of a request this node
// sends on with the one source address it determined. Whatever a client
// wrote in X-Real-IP, X-Forwarded-For or Forwarded never reaches the
// leader; the leader trusts this node (a trusted proxy) and so sees the
// original client, as this node saw it.
func forwardSource(in, out *http.Request) {
	out.Header.Del("X-Real-Ip")
	out.Header.Del("X-Forwarded-For")
	out.Header.Del("Forwarded")
	if a := source(in); a.IsValid() {
		out.Header.Set("X-Forwarded-For", a.String())
	} else {
		// Unknown stays unknown: an address the leader would reject.
		out.Header.Set("X-Forwarded-For", "unknown")
	}
}

// markForwarded makes a forwarded request say so, whatever the client
// sent. It runs in the proxy's Rewrite, after the hop-by-hop headers are
// removed, so a client cannot drop the mark by naming it in Connection:
// the leader's peer connection carries the client's request, and the mark
// is what tells it apart from a coordinator's own call (nodes.go refuses
// a forwarded registration). The internal headers a coordinator sets on
// its own calls never pass through: a client's request is no artifact
// copy.
func markForwarded(out *http.Request, self string) {
	out.Header.Set(ForwardedHeader, self)
	out.Header.Del(ArtifactLocalHeader)
	out.Header.Del(AppliedIndexHeader)
}

// proxies caches one reverse proxy per leader URL.
type proxies struct {
	mu sync.Mutex
	by map[string]*httputil.ReverseProxy
}

func (s *Server) proxyTo(leader string) (*httputil.ReverseProxy, error) {
	s.proxies.mu.Lock()
	defer s.proxies.mu.Unlock()
	if p, ok := s.proxies.by[leader]; ok {
		return p, nil
	}
	u, err := s.peerURL(leader)
	if err != nil {
		s.log.Warn("the leader's recorded address is unusable", "address", leader, "error", err)
		return nil, newError(api.CodeNoLeader, "the leader's recorded address is unusable (%v)", err)
	}
	p := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		pr.SetURL(u)
		forwardSource(pr.In, pr.Out)
		markForwarded(pr.Out, s.cluster.ID())
	}}
	p.Transport = s.forwardTransport
	p.FlushInterval = -1 // log streams and long polls pass through as they come
	p.ErrorLog = nil
	p.ErrorHandler = func(w http.ResponseWriter, r *http.Request, err error) {
		s.log.Warn("forwarding to the leader failed", "leader", leader, "path", redactCredentials(r.URL.Path), "error", redactCredentials(err.Error()))
		var op *net.OpError
		if errors.As(err, &op) && op.Op == "dial" {
			s.writeError(w, r, newError(api.CodeNoLeader, "the leader could not be reached; retry"))
			return
		}
		// The request may have reached the leader and been applied.
		s.writeError(w, r, fmt.Errorf("%w: %w", newError(api.CodeNoLeader, "the leader's answer was lost; the write may have been applied"), cluster.ErrOutcomeUnknown))
	}
	if s.proxies.by == nil {
		s.proxies.by = map[string]*httputil.ReverseProxy{}
	}
	s.proxies.by[leader] = p
	return p, nil
}
