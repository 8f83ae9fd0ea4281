package httpapi

import (
	"bufio"
	"net"
	"net/http"
	"time"
)

// An exec session lasts as long as its command, so a follower that relays
// one to the leader lifts its read and write deadlines, but only once the
// leader has taken the session: a 101 switching to a WebSocket (the proxy
// then hijacks the connection) or a 2xx streaming answer. Until then the
// server's deadlines hold, so a caller that has not been authenticated
// cannot keep a follower's connection open by sending slowly.

// execStreamWriter lifts the deadlines of the connection it writes to
// when the leader's answer says the session was taken.
type execStreamWriter struct {
	http.ResponseWriter
	lifted bool
}

func (w *execStreamWriter) lift() {
	if w.lifted {
		return
	}
	w.lifted = true
	rc := http.NewResponseController(w.ResponseWriter)
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Time{})
}

// WriteHeader lifts the deadlines for a successful streaming answer.
func (w *execStreamWriter) WriteHeader(code int) {
	if code >= 200 && code < 300 {
		w.lift()
	}
	w.ResponseWriter.WriteHeader(code)
}

// Hijack lifts the deadlines for the WebSocket the leader switched to
// (the proxy hijacks only after the leader's 101).
func (w *execStreamWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	w.lift()
	return http.NewResponseController(w.ResponseWriter).Hijack()
}

// Flush passes on the proxy's flushes of a streaming answer.
func (w *execStreamWriter) Flush() {
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap gives http.ResponseController the writer underneath.
func (w *execStreamWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
