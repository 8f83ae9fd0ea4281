package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
)

// devPprofEnv is the variable a gpulayer built with the benchpprof tag
// (cmd/gpulayer/benchpprof.go) reads for its profile controls' address.
const devPprofEnv = "GPULAYER_BENCH_PPROF_ADDR"

// devProfiler profiles `gpulayer dev` over exactly one burst, through the
// start/stop listener of a benchpprof build (-profile-dev).
type devProfiler struct{ addr string }

// newDevProfiler picks a free loopback port for the listener.
func newDevProfiler() (*devProfiler, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		return nil, err
	}
	return &devProfiler{addr: addr}, nil
}

func (p *devProfiler) post(ctx context.Context, path string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+p.addr+path, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("dev profile %s: %s: %s", path, resp.Status, b)
	}
	return b, nil
}

// around runs f with the dev process's CPU profile on, saves the profile
// as name.pprof under the profiles directory and adds its top entries to
// the report's details. With no profiler it only runs f.
func (e *env) around(ctx context.Context, p *devProfiler, name string, f func() error) error {
	if p == nil {
		return f()
	}
	if _, err := p.post(ctx, "/start"); err != nil {
		return err
	}
	ferr := f()
	b, err := p.post(ctx, "/stop")
	if ferr != nil {
		return ferr
	}
	if err != nil {
		return err
	}
	_, sum, err := e.saveProfile(b, name)
	if err != nil {
		return err
	}
	e.report.detail(name+"_profile", sum)
	return nil
}
