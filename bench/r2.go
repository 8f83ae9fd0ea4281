package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/gpulayer/gpulayer/bench/proc"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// plainHTTPChild is the R2 reference server: a bare net/http handler that
// checks the protocol header, reads the body under the same cap, decodes it
// as strictly as the coordinator does, and answers a response of the same
// shape. No authentication, no state, no Raft.
func plainHTTPChild(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("plainhttp", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:0", "listen address")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	mux.HandleFunc("POST /v1/workers/self/heartbeat", func(w http.ResponseWriter, r *http.Request) {
		var req api.HeartbeatRequest
		if !plainDecode(w, r, &req) {
			return
		}
		plainWrite(w, api.HeartbeatResponse{CancelTaskIDs: []string{}, Command: api.CommandNone, IntervalSeconds: 2})
	})
	mux.HandleFunc("POST /v1/tasks/{id}/finish", func(w http.ResponseWriter, r *http.Request) {
		var req api.FinishRequest
		if !plainDecode(w, r, &req) {
			return
		}
		code := req.ExitCode
		plainWrite(w, api.TaskResponse{Task: api.Task{ID: r.PathValue("id"), State: api.TaskSucceeded, AttemptID: req.AttemptID, ExitCode: &code}})
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 2 * time.Minute, WriteTimeout: time.Minute, IdleTimeout: 2 * time.Minute}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func plainDecode(w http.ResponseWriter, r *http.Request, v any) bool {
	if r.Header.Get(api.ProtocolHeader) != api.ProtocolVersion {
		http.Error(w, "protocol", http.StatusBadRequest)
		return false
	}
	b, err := io.ReadAll(io.LimitReader(http.MaxBytesReader(w, r.Body, api.MaxJSONBody+1), api.MaxJSONBody+1))
	if err != nil {
		http.Error(w, "body", http.StatusBadRequest)
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		http.Error(w, "json", http.StatusBadRequest)
		return false
	}
	if _, err := dec.Token(); err != io.EOF {
		http.Error(w, "trailing", http.StatusBadRequest)
		return false
	}
	return true
}

func plainWrite(w http.ResponseWriter, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(append(b, '\n'))
}

// plainServer is a running R2 reference server.
type plainServer struct {
	child *proc.Child
	url   string
}

func (e *env) startPlainHTTP(ctx context.Context) (*plainServer, error) {
	addr, err := proc.FreeAddr()
	if err != nil {
		return nil, err
	}
	ch, err := proc.Start(ctx, proc.Spec{Name: "plainhttp", Exe: e.exe, Args: []string{"__plainhttp", "-addr", addr}, Stderr: e.childLog})
	if err != nil {
		return nil, err
	}
	s := &plainServer{child: ch, url: "http://" + addr}
	hc := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(10 * time.Second)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if resp, err := hc.Get(s.url + "/healthz"); err == nil {
			resp.Body.Close()
			return s, nil
		}
		if time.Now().After(deadline) {
			ch.Kill()
			return nil, errors.New("plain HTTP server did not come up")
		}
		select {
		case <-ch.Done():
			return nil, fmt.Errorf("plain HTTP server exited: %v", ch.Err())
		case <-tick.C:
		}
	}
}

// runR2 measures the bare handler with the agents' client at the
// concurrency of S1 (64), with S1's finish body.
func (e *env) runR2(ctx context.Context) error {
	s, err := e.startPlainHTTP(ctx)
	if err != nil {
		return err
	}
	defer s.child.Stop(5 * time.Second)
	const conc = 64
	clients := make([]*client.Client, conc)
	for i := range clients {
		if clients[i], err = client.New(client.Config{Addrs: []string{s.url}, Token: "glw_0000000000000000_" + fmt.Sprintf("%064d", i)}); err != nil {
			return err
		}
	}
	attempt := fmt.Sprintf("%024x", 7)
	var cpu time.Duration
	res := closedLoop(ctx, conc, e.dur(300*time.Millisecond, time.Second), func() {
		cpu = cpuDuring(s.child, func() { <-time.After(e.dur(1500*time.Millisecond, 5*time.Second)) })
	},
		func(ctx context.Context, i int) error {
			_, err := clients[i].Finish(ctx, "jaaaaaaaaaaaaaaaa-0", api.FinishRequest{AttemptID: attempt, SubmissionID: attempt + "-finish"})
			return err
		})
	e.report.detail("r2", res)
	e.report.add(Row{
		Scenario: "R2", Metric: "bare net/http + strict JSON decode, c=64 (finish body, sdk/client)",
		Value: fmt.Sprintf("%.0f req/s; p50 %.2f ms, p99 %.2f ms; server %.0f µs CPU/req", res.Rate, res.Latency.P50MS, res.Latency.P99MS, cpuPerReq(cpu, res)),
	})
	if res.Latency.Errors > 0 {
		e.report.fail("R2: %d request errors", res.Latency.Errors)
	}
	e.r2 = &res
	return nil
}

// cpuDuring returns the CPU time a child used while fn ran.
func cpuDuring(c *proc.Child, fn func()) time.Duration {
	before, _ := c.CPU()
	fn()
	after, _ := c.CPU()
	return after - before
}

// cpuPerReq is CPU microseconds per completed request over a window.
func cpuPerReq(cpu time.Duration, r loadResult) float64 {
	n := r.Rate * r.Window.Seconds()
	if n == 0 {
		return 0
	}
	return float64(cpu.Microseconds()) / n
}
