// Package stats records latencies and summarises them as percentiles.
package stats

import (
	"math"
	"slices"
	"sync"
	"time"
)

// Recorder collects durations. It is safe for concurrent use.
type Recorder struct {
	mu      sync.Mutex
	samples []time.Duration
	errors  int
}

// Add records one successful operation's duration.
func (r *Recorder) Add(d time.Duration) {
	r.mu.Lock()
	r.samples = append(r.samples, d)
	r.mu.Unlock()
}

// Error records one failed operation.
func (r *Recorder) Error() {
	r.mu.Lock()
	r.errors++
	r.mu.Unlock()
}

// Reset drops everything recorded so far (end of a warm-up).
func (r *Recorder) Reset() {
	r.mu.Lock()
	r.samples = r.samples[:0]
	r.errors = 0
	r.mu.Unlock()
}

// Summary is a latency distribution in milliseconds.
type Summary struct {
	N      int     `json:"n"`
	Errors int     `json:"errors,omitempty"`
	MeanMS float64 `json:"mean_ms"`
	P50MS  float64 `json:"p50_ms"`
	P99MS  float64 `json:"p99_ms"`
	MaxMS  float64 `json:"max_ms"`
}

// Summary sorts a copy of the samples and returns their distribution.
func (r *Recorder) Summary() Summary {
	r.mu.Lock()
	s := slices.Clone(r.samples)
	errs := r.errors
	r.mu.Unlock()
	out := Of(s)
	out.Errors = errs
	return out
}

// Of summarises a set of durations.
func Of(s []time.Duration) Summary {
	if len(s) == 0 {
		return Summary{}
	}
	slices.Sort(s)
	var sum time.Duration
	for _, d := range s {
		sum += d
	}
	return Summary{
		N:      len(s),
		MeanMS: ms(sum / time.Duration(len(s))),
		P50MS:  ms(Percentile(s, 50)),
		P99MS:  ms(Percentile(s, 99)),
		MaxMS:  ms(s[len(s)-1]),
	}
}

// Percentile returns the p-th percentile (nearest rank) of sorted samples.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	rank = min(max(rank, 1), len(sorted))
	return sorted[rank-1]
}

func ms(d time.Duration) float64 {
	return math.Round(float64(d)/float64(time.Millisecond)*100) / 100
}
