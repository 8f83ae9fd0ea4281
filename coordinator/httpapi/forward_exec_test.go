package httpapi

import (
	"bufio"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// deadlineRecorder is a ResponseWriter that records the deadlines set on
// it and whether it was hijacked.
type deadlineRecorder struct {
	*httptest.ResponseRecorder
	read, write []time.Time
	hijacked    bool
}

func (d *deadlineRecorder) SetReadDeadline(t time.Time) error { d.read = append(d.read, t); return nil }
func (d *deadlineRecorder) SetWriteDeadline(t time.Time) error {
	d.write = append(d.write, t)
	return nil
}
func (d *deadlineRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	d.hijacked = true
	return nil, nil, nil
}

// A follower relaying an exec attach lifts its connection's deadlines
// only once the leader took the session (a 2xx stream, or the hijack
// after a 101); a refusal (401, 404, 409…) leaves them, so a caller the
// leader did not authenticate cannot hold a follower's connection open.
// Before, the deadlines were lifted before the request was relayed.
func TestExecRelayLiftsDeadlinesOnlyOnceTaken(t *testing.T) {
	cases := []struct {
		name   string
		answer func(w http.ResponseWriter)
		lifted bool
	}{
		{"refused", func(w http.ResponseWriter) { w.WriteHeader(http.StatusUnauthorized) }, false},
		{"not found", func(w http.ResponseWriter) { w.WriteHeader(http.StatusNotFound) }, false},
		{"plain stream", func(w http.ResponseWriter) { w.WriteHeader(http.StatusOK) }, true},
		{"websocket", func(w http.ResponseWriter) { _, _, _ = http.NewResponseController(w).Hijack() }, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := &deadlineRecorder{ResponseRecorder: httptest.NewRecorder()}
			c.answer(&execStreamWriter{ResponseWriter: rec})
			lifted := len(rec.read) == 1 && rec.read[0].IsZero() && len(rec.write) == 1 && rec.write[0].IsZero()
			if lifted != c.lifted || (!c.lifted && (len(rec.read) > 0 || len(rec.write) > 0)) {
				t.Fatalf("deadlines read %v write %v, want lifted %v", rec.read, rec.write, c.lifted)
			}
			if c.name == "websocket" && !rec.hijacked {
				t.Fatal("the hijack did not reach the connection")
			}
		})
	}
}
