package main

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gpulayer/gpulayer/bench/stats"
)

// loadResult is what a load generator measured over its window.
type loadResult struct {
	Rate    float64       `json:"rate_per_sec"`
	Offered float64       `json:"offered_per_sec,omitempty"`
	Latency stats.Summary `json:"latency"`
	Window  time.Duration `json:"window_ns"`
	// LastError is the last failure seen, if any.
	LastError string `json:"last_error,omitempty"`
}

// lastErr keeps the most recent error of a load generator.
type lastErr struct {
	mu  sync.Mutex
	err error
}

func (l *lastErr) set(err error) {
	l.mu.Lock()
	l.err = err
	l.mu.Unlock()
}

func (l *lastErr) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err == nil {
		return ""
	}
	return l.err.Error()
}

// closedLoop runs fn from conc goroutines back to back: each call starts
// when the previous one of its goroutine ended. Calls during warm are not
// recorded; the window ends when measure returns (it may, for example,
// fetch a profile of the window's length).
func closedLoop(ctx context.Context, conc int, warm time.Duration, measure func(), fn func(ctx context.Context, worker int) error) loadResult {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var on atomic.Bool
	var rec stats.Recorder
	var n atomic.Int64
	var last lastErr
	var wg sync.WaitGroup
	for i := range conc {
		wg.Go(func() {
			for ctx.Err() == nil {
				t := time.Now()
				err := fn(ctx, i)
				if !on.Load() || ctx.Err() != nil {
					continue
				}
				if err != nil {
					rec.Error()
					last.set(err)
					continue
				}
				rec.Add(time.Since(t))
				n.Add(1)
			}
		})
	}
	<-time.After(warm)
	on.Store(true)
	start := time.Now()
	measure()
	on.Store(false)
	window := time.Since(start)
	done := n.Load()
	cancel()
	wg.Wait()
	return loadResult{Rate: float64(done) / window.Seconds(), Latency: rec.Summary(), Window: window, LastError: last.String()}
}

// paced offers rate calls per second, open loop, spread evenly, from a
// pool of goroutines (the connections of a fleet of agents). Each call's
// latency counts from when it was due, so time spent queued behind a slow
// server is not hidden (no coordinated omission). Call k goes to fn(k).
func paced(ctx context.Context, rate float64, pool int, warm time.Duration, measure func(), fn func(ctx context.Context, k int) error) loadResult {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type job struct {
		k   int
		due time.Time
		rec bool
	}
	jobs := make(chan job, pool*64)
	var last lastErr
	var rec stats.Recorder
	var n atomic.Int64
	var wg sync.WaitGroup
	for range pool {
		wg.Go(func() {
			for j := range jobs {
				err := fn(ctx, j.k)
				if !j.rec || ctx.Err() != nil {
					continue
				}
				if err != nil {
					rec.Error()
					last.set(err)
					continue
				}
				rec.Add(time.Since(j.due))
				n.Add(1)
			}
		})
	}
	var on atomic.Bool
	var offered atomic.Int64
	genDone := make(chan struct{})
	begin := time.Now()
	go func() {
		defer close(genDone)
		defer close(jobs)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		sent := 0
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-tick.C:
				due := int(now.Sub(begin).Seconds() * rate)
				for ; sent < due; sent++ {
					measuring := on.Load()
					if measuring {
						offered.Add(1)
					}
					select {
					case jobs <- job{k: sent, due: begin.Add(time.Duration(float64(sent) / rate * float64(time.Second))), rec: measuring}:
					case <-ctx.Done():
						return
					}
				}
			}
		}
	}()
	<-time.After(warm)
	on.Store(true)
	start := time.Now()
	measure()
	on.Store(false)
	window := time.Since(start)
	done := n.Load()
	cancel()
	<-genDone
	wg.Wait()
	return loadResult{Rate: float64(done) / window.Seconds(), Offered: float64(offered.Load()) / window.Seconds(), Latency: rec.Summary(), Window: window, LastError: last.String()}
}
