package httpapi

import (
	"net/http"
	"strconv"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// ServerMaxHeaderBytes is what the coordinator's http.Server is told to
// read of a request line and headers. It is larger than the protocol's
// limit (api.MaxHeaderBytes) so that a request between the two reaches
// the first middleware, which refuses it with the JSON error body; only a
// request over this much gets net/http's own plain-text 431. Four times
// the protocol's limit: enough for the JSON answer to cover any client
// that overshoots by mistake, little enough that an unauthenticated
// connection costs a parse of at most 256 KiB of headers.
const ServerMaxHeaderBytes = 4 * api.MaxHeaderBytes

// headerBytes is the size of r's request line and header lines as they
// came on the wire (within a few bytes: the separators are counted as
// HTTP/1.1 writes them).
func headerBytes(r *http.Request) int {
	n := len(r.Method) + 1 + len(r.RequestURI) + 1 + len(r.Proto) + 2
	if r.Host != "" {
		n += len("Host: ") + len(r.Host) + 2
	}
	for k, vs := range r.Header {
		for _, v := range vs {
			n += len(k) + 2 + len(v) + 2
		}
	}
	return n
}

// refuseLongHeader answers a request whose line and headers exceed
// api.MaxHeaderBytes: status 431, the status net/http itself uses past
// ServerMaxHeaderBytes, with code invalid_argument in the protocol's
// error body. It reports whether it answered.
func (s *Server) refuseLongHeader(w http.ResponseWriter, r *http.Request) bool {
	n := headerBytes(r)
	if n <= api.MaxHeaderBytes {
		return false
	}
	body := &api.Error{Code: api.CodeInvalidArgument, RequestID: requestID(r),
		Message: "request line and headers: " + strconv.Itoa(n) + " bytes, at most " + strconv.Itoa(api.MaxHeaderBytes)}
	w.Header().Set("Connection", "close")
	writeJSON(w, http.StatusRequestHeaderFieldsTooLarge, api.ErrorBody{Error: body})
	return true
}
