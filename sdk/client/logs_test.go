package client

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// logServer answers the logs route with stream(call) and counts calls.
func logServer(t *testing.T, stream func(call int32, w http.ResponseWriter)) (*Client, *atomic.Int32) {
	t.Helper()
	calls := new(atomic.Int32)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-ndjson")
		w.Header().Set("Trailer", api.HeaderStreamEnd)
		stream(calls.Add(1), w)
	}))
	t.Cleanup(srv.Close)
	c, err := New(Config{Addrs: []string{srv.URL}, Token: "glc_x", MaxRetryWait: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return c, calls
}

func writeEntries(w http.ResponseWriter, data ...string) {
	enc := json.NewEncoder(w)
	for i, d := range data {
		_ = enc.Encode(api.LogEntry{TaskID: "t", Seq: int64(i + 1), Data: d})
	}
	w.(http.Flusher).Flush()
}

func TestLogsFollowResumesACutStream(t *testing.T) {
	cases := []struct {
		name      string
		follow    bool
		stream    func(call int32, w http.ResponseWriter)
		want      []string
		wantErr   bool
		wantCalls int32
	}{
		{"cut, then the rest", true, func(call int32, w http.ResponseWriter) {
			if call == 1 {
				writeEntries(w, "a", "b")
				panic(http.ErrAbortHandler) // the connection breaks
			}
			writeEntries(w, "a", "b", "c")
			w.Header().Set(api.HeaderStreamEnd, api.StreamEndJobEnded)
		}, []string{"a", "b", "c"}, false, 2},
		{"ended without a trailer, then the rest", true, func(call int32, w http.ResponseWriter) {
			if call == 1 {
				writeEntries(w, "a")
				return
			}
			writeEntries(w, "a", "b")
			w.Header().Set(api.HeaderStreamEnd, api.StreamEndJobEnded)
		}, []string{"a", "b"}, false, 2},
		{"always cut: gives up", true, func(call int32, w http.ResponseWriter) {
			writeEntries(w)
			panic(http.ErrAbortHandler)
		}, nil, true, maxStreamCuts + 1},
		{"not following: no retry", false, func(call int32, w http.ResponseWriter) {
			writeEntries(w, "a")
			panic(http.ErrAbortHandler)
		}, []string{"a"}, true, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cl, calls := logServer(t, c.stream)
			var got []string
			err := cl.Logs(t.Context(), "j", c.follow, func(e api.LogEntry) error { got = append(got, e.Data); return nil })
			if (err != nil) != c.wantErr {
				t.Fatalf("Logs: %v, want error %v", err, c.wantErr)
			}
			if c.wantErr && c.follow && !errors.Is(err, errStreamCut) {
				t.Errorf("Logs: %v, want a cut stream", err)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("delivered %q, want %q", got, c.want)
			}
			if n := calls.Load(); n != c.wantCalls {
				t.Errorf("%d requests, want %d", n, c.wantCalls)
			}
		})
	}
}
