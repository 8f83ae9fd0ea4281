package main

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gpulayer/gpulayer/bench/proc"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// s9Figures is what S9 measured: a single coordinator's memory before and
// after a run of one-task jobs through the API, each kept finished.
type s9Figures struct {
	Warmup, Jobs          int
	RSSBefore, RSSAfter   int64
	HeapBefore, HeapAfter uint64
	RSSPerJob, HeapPerJob float64 // bytes
	// PartsBefore and PartsAfter split the RSS: anonymous pages (the
	// heap) and file-backed ones (the binary, the Raft log's mapped
	// database).
	PartsBefore, PartsAfter proc.RSSParts
}

// runS9 measures what a retained finished job costs a coordinator, from
// outside: one coordinator, eight simulated agents; a warm-up of jobs
// first (so that what is allocated once, connections, pools and tables'
// first growth, is not charged to the jobs), then memory after a forced
// GC (which also hands freed pages back), then the measured jobs, each
// submitted, acquired, started, given one line of output and finished
// (with a submission id, as agents finish), then memory after a forced
// GC again. Growth divided by the jobs is the figure; the target
// is 1 KiB of RSS a job.
func (e *env) runS9(ctx context.Context) error {
	f := s9Figures{Warmup: e.num(100, 300), Jobs: e.num(300, 3000)}
	c, err := e.startCluster(ctx, "s9", clusterOpts{nodes: 1})
	if err != nil {
		return err
	}
	defer c.stop()
	n := c.nodes[0]
	urls := c.urls(n)
	agents, err := registerAgents(ctx, urls, c.joinToken, "s9-", 8, []string{"exec"}, nil, 8, &transportLog{})
	if err != nil {
		return err
	}
	admin, err := client.New(client.Config{Addrs: urls, Token: c.adminToken})
	if err != nil {
		return err
	}
	measure := func(parts *proc.RSSParts) (int64, uint64, error) {
		resp, err := http.Get("http://" + n.debugAddr + "/debug/gc")
		if err != nil {
			return 0, 0, err
		}
		resp.Body.Close()
		rss, _, err := n.proc().Memory()
		if err != nil {
			return 0, 0, err
		}
		if *parts, err = proc.RSSPartsOf(n.proc().PID()); err != nil {
			return 0, 0, err
		}
		return rss, heapInuse(ctx, n), nil
	}
	if err := s9Run(ctx, admin, agents, "s9w", f.Warmup); err != nil {
		return fmt.Errorf("warm-up: %w", err)
	}
	if f.RSSBefore, f.HeapBefore, err = measure(&f.PartsBefore); err != nil {
		return err
	}
	if err := s9Run(ctx, admin, agents, "s9", f.Jobs); err != nil {
		return err
	}
	if f.RSSAfter, f.HeapAfter, err = measure(&f.PartsAfter); err != nil {
		return err
	}
	e.saveHeapProfile(ctx, n, "s9-heap")
	var d api.DigestResponse
	if err := c.get(ctx, n.url+"/v1/operator/local/digest", c.adminToken, &d); err != nil {
		return err
	}
	if want := f.Warmup + f.Jobs; d.Tasks != want {
		return fmt.Errorf("the coordinator holds %d tasks, want %d", d.Tasks, want)
	}
	f.RSSPerJob = float64(f.RSSAfter-f.RSSBefore) / float64(f.Jobs)
	f.HeapPerJob = (float64(f.HeapAfter) - float64(f.HeapBefore)) / float64(f.Jobs)
	e.reportS9(f)
	return nil
}

// s9Run submits jobs one-task jobs from 16 goroutines while the agents
// take each through acquire, start, one line of output and finish (S8's
// s8Task, with one chunk); it returns once every one has finished.
func s9Run(ctx context.Context, admin *client.Client, agents []*simAgent, prefix string, jobs int) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	const line = "done in 0.1 s, exit 0, nothing else to say here at all, one line\n"
	var next, left atomic.Int64
	left.Store(int64(jobs))
	errc := make(chan error, 16+len(agents))
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for i := next.Add(1); i <= int64(jobs); i = next.Add(1) {
				if _, err := admin.SubmitJob(ctx, execSpec(fmt.Sprintf("%s-%d", prefix, i), 0)); err != nil {
					errc <- fmt.Errorf("submit: %w", err)
					return
				}
			}
		})
	}
	for _, a := range agents {
		wg.Go(func() {
			for left.Add(-1) >= 0 {
				if err := s8Task(ctx, a, line, 1); err != nil {
					errc <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errc)
	return <-errc
}

func (e *env) reportS9(f s9Figures) {
	e.report.detail("s9", f)
	e.report.add(Row{
		Scenario: "S9", Metric: fmt.Sprintf("coordinator memory per retained finished job (%d one-task jobs through the API after %d to warm up; after GC)", f.Jobs, f.Warmup),
		Value: fmt.Sprintf("%.0f B of RSS a job (%+.1f MB); Go heap %.0f B a job (%+.1f MB)",
			f.RSSPerJob, mb(f.RSSAfter-f.RSSBefore), f.HeapPerJob, mb(int64(f.HeapAfter)-int64(f.HeapBefore))),
		Reference: fmt.Sprintf("RSS %.0f → %.0f MB (anonymous %+.1f MB, file-backed %+.1f MB); heap in use %.0f → %.0f MB",
			mb(f.RSSBefore), mb(f.RSSAfter), mb(f.PartsAfter.Anon-f.PartsBefore.Anon), mb(f.PartsAfter.File-f.PartsBefore.File),
			mb(int64(f.HeapBefore)), mb(int64(f.HeapAfter))),
		Target: "≤ 1 KiB RSS a job", Met: e.judged(f.RSSPerJob <= 1024),
	})
}
