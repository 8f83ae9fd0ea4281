package httpapi

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/auth"
	"github.com/gpulayer/gpulayer/sdk/api"
)

type ctxKey int

const requestIDKey ctxKey = iota

func requestID(r *http.Request) string {
	id, _ := r.Context().Value(requestIDKey).(string)
	return id
}

// statusWriter records the status code for the request log.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// serve is the outer middleware, in this order: request id and source
// address, panic recovery, the request line and header size limit,
// protocol header, the per-source rate limits,
// the body cap, then forwarding to the leader or the route itself (which
// authenticates, applies the per-credential limit and calls the handler).
// The request log line never includes headers, query strings or bodies,
// and anything shaped like a credential in the path is redacted.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	id := auth.NewID(8)
	peer := s.isPeer(r)
	src, trusted := sourceOf(r, s.trusted, peer)
	ctx := context.WithValue(r.Context(), requestIDKey, id)
	r = r.WithContext(withInfo(ctx, &reqInfo{id: id, source: src, peerTrusted: trusted, peer: peer}))
	sw := &statusWriter{ResponseWriter: w}
	sw.Header().Set("X-Request-Id", id)
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			s.log.Error("handler panic", "request_id", id, "path", redactCredentials(r.URL.Path), "panic", p)
			if sw.status == 0 {
				s.writeError(sw, r, newError(api.CodeInternal, "internal error"))
			}
		}
		s.metrics.observe(s.routeOf(r), sw.status, time.Since(start))
		s.log.Debug("request", "request_id", id, "method", r.Method, "path", redactCredentials(r.URL.Path), "source", sourceString(r), "status", sw.status, "duration_ms", time.Since(start).Milliseconds())
	}()
	if s.refuseLongHeader(sw, r) {
		return
	}
	if strings.HasPrefix(r.URL.Path, "/v1/") && !strings.HasPrefix(r.URL.Path, "/v1/status/") {
		if err := checkProtocolHeader(r.Header); err != nil {
			s.writeError(sw, r, err)
			return
		}
	}
	if err := s.limitSource(r); err != nil {
		s.writeError(sw, r, err)
		return
	}
	r.Body = http.MaxBytesReader(sw, r.Body, bodyCap(r.URL.Path)+1)
	if s.route(sw, r) {
		return
	}
	s.mux.ServeHTTP(sw, r)
}

// bodyCap is the largest body a path accepts: JSON everywhere, except
// uploads of snapshots and artifacts.
func bodyCap(path string) int64 {
	if path == "/v1/operator/snapshot" || strings.HasPrefix(path, "/v1/artifacts/") {
		return api.MaxArtifactBody
	}
	return api.MaxJSONBody
}

// checkProtocolHeader accepts a request whose every X-GpuLayer-Protocol
// header says the version this coordinator speaks. Every value is read,
// not the first alone: two headers that disagree are refused whatever
// their order, so a proxy that reads the last one cannot be told another
// story than this coordinator. The same value repeated is that value.
func checkProtocolHeader(h http.Header) error {
	values := h.Values(api.ProtocolHeader)
	if len(values) == 0 {
		return newError(api.CodeProtocolMismatch, "header %s is missing; it must be %q", api.ProtocolHeader, api.ProtocolVersion)
	}
	for _, v := range values {
		if v != api.ProtocolVersion {
			if len(values) > 1 {
				return newError(api.CodeProtocolMismatch, "header %s is given %d times and not always as %q", api.ProtocolHeader, len(values), api.ProtocolVersion)
			}
			return newError(api.CodeProtocolMismatch, "header %s must be %q", api.ProtocolHeader, api.ProtocolVersion)
		}
	}
	return nil
}
