//go:build benchpprof

package main

import (
	"bytes"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime/pprof"
	"sync"
)

// BenchPprofEnv names the loopback address a binary built with the
// benchpprof tag serves its CPU profile controls on. Only the benchmark
// (bench/, -profile-dev) builds such a binary: a release build has no
// such listener.
const BenchPprofEnv = "GPULAYER_BENCH_PPROF_ADDR"

// init starts the listener when the variable is set: POST /start begins
// a CPU profile, POST /stop ends it and answers the profile, so that the
// benchmark can profile exactly the span of one burst.
func init() {
	addr := os.Getenv(BenchPprofEnv)
	if addr == "" {
		return
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		slog.Error("bench pprof listener", "error", err)
		return
	}
	var (
		mu  sync.Mutex
		buf *bytes.Buffer
	)
	mux := http.NewServeMux()
	mux.HandleFunc("POST /start", func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if buf != nil {
			http.Error(w, "already profiling", http.StatusConflict)
			return
		}
		b := new(bytes.Buffer)
		if err := pprof.StartCPUProfile(b); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		buf = b
	})
	mux.HandleFunc("POST /stop", func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if buf == nil {
			http.Error(w, "not profiling", http.StatusConflict)
			return
		}
		pprof.StopCPUProfile()
		_, _ = w.Write(buf.Bytes())
		buf = nil
	})
	go func() { _ = http.Serve(ln, mux) }()
}
