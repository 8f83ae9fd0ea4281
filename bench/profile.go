package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/gpulayer/gpulayer/bench/pprofx"
)

// profileSummary is what the report keeps of a CPU profile.
type profileSummary struct {
	File    string        `json:"file"`
	Seconds int           `json:"seconds"`
	TopCum  []pprofx.Func `json:"top_cum"`
	TopFlat []pprofx.Func `json:"top_flat"`
	// Shares are the percentages of samples passing through named code.
	Shares map[string]float64 `json:"shares,omitempty"`
}

// profile records a CPU profile of a coordinator for secs seconds through
// its debug listener, saves it under the profiles directory and parses it.
func (e *env) profile(ctx context.Context, n *coordProc, secs int, name string) (*pprofx.Profile, profileSummary, error) {
	url := fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", n.debugAddr, secs)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, profileSummary{}, err
	}
	resp, err := (&http.Client{Timeout: time.Duration(secs+30) * time.Second}).Do(req)
	if err != nil {
		return nil, profileSummary{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, profileSummary{}, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, profileSummary{}, fmt.Errorf("profile: %s: %s", resp.Status, b)
	}
	p, sum, err := e.saveProfile(b, name)
	sum.Seconds = secs
	return p, sum, err
}

// saveProfile saves a CPU profile as name.pprof under the profiles
// directory (where it can) and parses it.
func (e *env) saveProfile(b []byte, name string) (*pprofx.Profile, profileSummary, error) {
	var sum profileSummary
	if err := os.MkdirAll(e.opts.profiles, 0o755); err == nil {
		path := filepath.Join(e.opts.profiles, name+".pprof")
		if err := os.WriteFile(path, b, 0o644); err == nil {
			sum.File = path
		}
	}
	p, err := pprofx.Parse(bytes.NewReader(b))
	if err != nil {
		return nil, sum, err
	}
	sum.TopCum, sum.TopFlat = p.Top(25), p.TopFlat(25)
	return p, sum, nil
}

// goroutines saves a goroutine dump (counts by stack) of a coordinator:
// where its request handlers wait is what a CPU profile cannot show.
func (e *env) goroutines(ctx context.Context, n *coordProc, name string) string {
	return e.saveDebug(ctx, n, "/debug/pprof/goroutine?debug=1", name+".txt")
}

// saveHeapProfile saves a coordinator's heap profile (in-use and
// allocated bytes by stack) as name.pb.gz under the profiles directory:
// where a memory target's bytes live is what RSS cannot show.
func (e *env) saveHeapProfile(ctx context.Context, n *coordProc, name string) string {
	return e.saveDebug(ctx, n, "/debug/pprof/heap", name+".pb.gz")
}

// saveDebug saves what a coordinator's debug listener answers at path
// as file under the profiles directory, and returns where; best effort
// ("" when it could not).
func (e *env) saveDebug(ctx context.Context, n *coordProc, path, file string) string {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+n.debugAddr+path, nil)
	if err != nil {
		return ""
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK || os.MkdirAll(e.opts.profiles, 0o755) != nil {
		return ""
	}
	out := filepath.Join(e.opts.profiles, file)
	if os.WriteFile(out, b, 0o644) != nil {
		return ""
	}
	return out
}
