package httpapi

import (
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// ForwardedHeader marks a request one coordinator forwarded to another, so
// a request is forwarded at most once.
const ForwardedHeader = "X-GpuLayer-Forwarded-By"

// local reports whether a path is always answered by the node it reaches.
func local(path string) bool {
	return strings.HasPrefix(path, "/v1/status/") || strings.HasPrefix(path, "/v1/operator/local/") || path == "/metrics"
}

// route decides where a request is served: here (leader that has taken
// office, or a local path), forwarded to the leader, or refused with
// no_leader / not_leader. It reports whether it answered the request.
func (s *Server) route(w http.ResponseWriter, r *http.Request) bool {
	if local(r.URL.Path) {
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
		s.writeError(w, r, newError(api.CodeNoLeader, "the cluster has no leader right now; retry"))
		return true
	}
	proxy, err := s.proxyTo(leader)
	if err != nil {
		s.writeError(w, r, err)
		return true
	}
	r.Header.Set(ForwardedHeader, s.cluster.ID())
	if strings.HasSuffix(r.URL.Path, "/logs") && r.Method == http.MethodGet {
		// A following log stream outlives the write timeout; the leader
		// bounds everything else it relays.
		_ = http.NewResponseController(w).SetWriteDeadline(time.Time{})
	}
	proxy.ServeHTTP(w, r)
	return true
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
	u, err := url.Parse(leader)
	if err != nil {
		return nil, newError(api.CodeNoLeader, "leader address %q is unusable", leader)
	}
	p := httputil.NewSingleHostReverseProxy(u)
	p.Transport = s.forwardTransport
	p.FlushInterval = -1 // log streams and long polls pass through as they come
	p.ErrorLog = nil
	p.ErrorHandler = func(w http.ResponseWriter, r *http.Request, err error) {
		s.log.Warn("forwarding to the leader failed", "leader", leader, "path", r.URL.Path, "error", err)
		s.writeError(w, r, newError(api.CodeNoLeader, "the leader could not be reached; retry"))
	}
	if s.proxies.by == nil {
		s.proxies.by = map[string]*httputil.ReverseProxy{}
	}
	s.proxies.by[leader] = p
	return p, nil
}
