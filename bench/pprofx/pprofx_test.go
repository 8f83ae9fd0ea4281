package pprofx_test

import (
	"bytes"
	"crypto/sha256"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/bench/pprofx"
)

//go:noinline
func burn(d time.Duration) (sum byte) {
	b := make([]byte, 4096)
	for end := time.Now().Add(d); time.Now().Before(end); {
		h := sha256.Sum256(b)
		sum += h[0]
	}
	return sum
}

// TestParse profiles a busy function and finds it in the parsed profile.
func TestParse(t *testing.T) {
	var buf bytes.Buffer
	if err := pprof.StartCPUProfile(&buf); err != nil {
		t.Skip("CPU profiling unavailable:", err)
	}
	burn(300 * time.Millisecond)
	pprof.StopCPUProfile()
	p, err := pprofx.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Samples) == 0 || p.Total == 0 {
		t.Skip("no samples (a very busy machine)")
	}
	if share := p.Share("pprofx_test.burn"); share < 50 {
		t.Errorf("burn share %.1f%%, want most of the profile", share)
	}
	top := p.Top(50)
	found := false
	for _, f := range top {
		found = found || strings.Contains(f.Name, "pprofx_test.burn")
	}
	if !found {
		t.Errorf("burn not among the top cumulative functions: %+v", top)
	}
	if flat := p.TopFlat(1); len(flat) != 1 || flat[0].FlatPct <= 0 {
		t.Errorf("TopFlat: %+v", flat)
	}
}

func TestParseRejectsGarbage(t *testing.T) {
	if _, err := pprofx.Parse(strings.NewReader("\x0a\xff\xff")); err == nil {
		t.Error("truncated input parsed without error")
	}
}
