package rawraft

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"

	"github.com/gpulayer/gpulayer/bench/stats"
)

// Run is one measured load at one concurrency.
type Run struct {
	Concurrency  int           `json:"concurrency"`
	WritesPerSec float64       `json:"writes_per_sec"`
	Latency      stats.Summary `json:"latency"`
}

// Result is what the leader measured.
type Result struct {
	Store     string `json:"store"`
	EntrySize int    `json:"entry_size"`
	Runs      []Run  `json:"runs"`
}

// load applies entry from conc goroutines, closed loop: each waits for its
// entry to be committed and applied before proposing the next. Nothing is
// recorded during warmup.
func load(r *raft.Raft, entry []byte, conc int, warmup, dur time.Duration) Run {
	const (
		warming = iota
		measuring
		stopped
	)
	var phase atomic.Int32
	var rec stats.Recorder
	var done atomic.Int64
	var wg sync.WaitGroup
	for range conc {
		wg.Go(func() {
			for {
				p := phase.Load()
				if p == stopped {
					return
				}
				t := time.Now()
				err := r.Apply(entry, 10*time.Second).Error()
				if p != measuring || phase.Load() != measuring {
					continue
				}
				if err != nil {
					rec.Error()
					continue
				}
				rec.Add(time.Since(t))
				done.Add(1)
			}
		})
	}
	<-time.After(warmup)
	start := time.Now()
	phase.Store(measuring)
	<-time.After(dur)
	phase.Store(stopped)
	elapsed := time.Since(start)
	wg.Wait()
	return Run{Concurrency: conc, WritesPerSec: float64(done.Load()) / elapsed.Seconds(), Latency: rec.Summary()}
}
