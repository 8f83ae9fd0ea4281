package httpapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/gpulayer/gpulayer/coordinator/cluster"
	"github.com/gpulayer/gpulayer/sdk/api"
)

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		noSniff(w)
		http.Error(w, "encode failed", http.StatusInternalServerError)
		return
	}
	writeRaw(w, status, b)
}

// noSniff tells browsers to take the Content-Type as given: an answer that
// echoes a caller's text (a job name, an error message) is never sniffed
// into HTML or script. Every JSON answer and the log stream set it.
func noSniff(w http.ResponseWriter) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
}

func writeRaw(w http.ResponseWriter, status int, b []byte) {
	noSniff(w)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)+1))
	w.WriteHeader(status)
	_, _ = w.Write(b)
	_, _ = w.Write([]byte("\n"))
}

// writeError renders err as the protocol's error body. Internal errors are
// not described to the caller; they are logged with the request id.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	code := codeFor(err)
	msg := redactCredentials(capMessage(err.Error()))
	if code == api.CodeInternal {
		s.log.Error("internal error", "request_id", requestID(r), "path", redactCredentials(r.URL.Path), "error", redactCredentials(err.Error()))
		msg = "internal error; see the coordinator log for request " + requestID(r)
	}
	body := &api.Error{Code: code, Message: msg, RequestID: requestID(r)}
	if errors.Is(err, cluster.ErrOutcomeUnknown) {
		// The write may have been applied: a client must not resend it
		// unless it is idempotent (a request id, a submission id).
		w.Header().Set(api.HeaderOutcome, api.OutcomeUnknown)
	}
	switch code {
	case api.CodeNotLeader:
		body.Leader = s.leaderHTTP()
		if body.Leader == "" {
			body.Code = api.CodeNoLeader
			w.Header().Set("Retry-After", "1")
		}
	case api.CodeNoLeader:
		w.Header().Set("Retry-After", "1")
	case api.CodeRateLimited:
		retry := 1
		var ae *apiError
		if errors.As(err, &ae) && ae.retryAfter > 0 {
			retry = ae.retryAfter
		}
		w.Header().Set("Retry-After", strconv.Itoa(retry))
	}
	writeJSON(w, body.Code.HTTPStatus(), api.ErrorBody{Error: body})
}
