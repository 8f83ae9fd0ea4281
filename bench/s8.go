package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gpulayer/gpulayer/internal/smaps"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// s8Figures is what S8 measured: coordinator memory before and after
// agents ship a volume of task output through the API.
type s8Figures struct {
	Tasks       int
	PerTaskMiB  float64
	TotalMiB    float64
	ChunkKiB    int
	Nodes       []s8Node
	MaxGrowthMB float64
	ReadBackMiB float64 // one job's output read back through the API
}

// s8Node is one coordinator's memory in S8.
type s8Node struct {
	ID                       string
	RSSBefore, RSSAfter, HWM int64
	HeapBefore, HeapAfterGC  uint64
	GrowthMB, HeapGrowthMB   float64
	// FileRSSAfter is the resident memory of each mapped file in the
	// data dir after the run (the Raft log store, the output file).
	FileRSSAfter map[string]int64
}

// runS8 runs three coordinators and eight simulated agents; each task
// writes its share of the output (1 GiB over 1,000 tasks in full mode) in
// chunks through POST /v1/tasks/{id}/logs, then finishes. Memory is read
// after a forced GC, before and after: output kept in the coordinator's
// memory shows as growth of the order of the volume.
func (e *env) runS8(ctx context.Context) error {
	const perTask, chunk = 1 << 20, 256 << 10
	f := s8Figures{Tasks: e.num(20, 1000), PerTaskMiB: perTask >> 20, ChunkKiB: chunk >> 10}
	f.TotalMiB = float64(f.Tasks) * f.PerTaskMiB
	c, err := e.startCluster(ctx, "s8", clusterOpts{})
	if err != nil {
		return err
	}
	defer c.stop()
	leader, err := c.awaitLeader(ctx, "", 30*time.Second)
	if err != nil {
		return err
	}
	urls := c.urls(leader)
	agents, err := registerAgents(ctx, urls, c.joinToken, "s8-", 8, []string{"exec"}, nil, 8, &transportLog{})
	if err != nil {
		return err
	}
	admin, err := client.New(client.Config{Addrs: urls, Token: c.adminToken})
	if err != nil {
		return err
	}
	jobs := make([]string, f.Tasks)
	for i := range jobs {
		j, err := admin.SubmitJob(ctx, execSpec(fmt.Sprintf("s8-%d", i), 0))
		if err != nil {
			return err
		}
		jobs[i] = j.ID
	}
	forceGC := func(n *coordProc) {
		if resp, err := http.Get("http://" + n.debugAddr + "/debug/gc"); err == nil {
			resp.Body.Close()
		}
	}
	for _, n := range c.nodes {
		forceGC(n)
		rss, _, _ := n.proc().Memory()
		f.Nodes = append(f.Nodes, s8Node{ID: n.id, RSSBefore: rss, HeapBefore: heapInuse(ctx, n)})
	}

	data := strings.Repeat(strings.Repeat("o", 127)+"\n", chunk/128)
	var left atomic.Int64
	left.Store(int64(f.Tasks))
	errc := make(chan error, len(agents))
	var wg sync.WaitGroup
	for _, a := range agents {
		wg.Go(func() {
			for left.Add(-1) >= 0 {
				if err := s8Task(ctx, a, data, perTask/chunk); err != nil {
					errc <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errc)
	if err := <-errc; err != nil {
		return err
	}

	for i, n := range c.nodes {
		forceGC(n)
		nf := &f.Nodes[i]
		nf.RSSAfter, nf.HWM, _ = n.proc().Memory()
		nf.HeapAfterGC = heapInuse(ctx, n)
		if files, err := smaps.FileRSS(n.proc().PID()); err == nil {
			nf.FileRSSAfter = map[string]int64{}
			for path, rss := range files {
				if strings.HasPrefix(path, n.dataDir) {
					nf.FileRSSAfter[strings.TrimPrefix(path, n.dataDir+"/")] = rss
				}
			}
		}
		nf.GrowthMB = mb(nf.RSSAfter - nf.RSSBefore)
		nf.HeapGrowthMB = mb(int64(nf.HeapAfterGC) - int64(nf.HeapBefore))
		f.MaxGrowthMB = max(f.MaxGrowthMB, nf.GrowthMB)
	}
	var read int
	if err := admin.Logs(ctx, jobs[len(jobs)-1], false, func(l api.LogEntry) error {
		read += len(l.Data)
		return nil
	}); err != nil {
		return fmt.Errorf("read back: %w", err)
	}
	f.ReadBackMiB = float64(read) / (1 << 20)
	if read != perTask {
		return fmt.Errorf("read back %d bytes of one task's output, want %d", read, perTask)
	}
	e.reportS8(f)
	return nil
}

// s8Task takes one task through acquire, start, chunks of output, finish.
func s8Task(ctx context.Context, a *simAgent, data string, chunks int) error {
	var resp api.AcquireResponse
	for resp.Task == nil {
		var err error
		if resp, err = a.cl.Acquire(ctx, api.AcquireRequest{WaitSeconds: 5}); err != nil {
			return fmt.Errorf("acquire: %w", err)
		}
	}
	t := *resp.Task
	if err := a.cl.Start(ctx, t.ID, t.AttemptID); err != nil {
		return fmt.Errorf("start: %w", err)
	}
	for i := range chunks {
		if err := a.cl.AppendLogs(ctx, t.ID, api.LogsRequest{AttemptID: t.AttemptID, Stream: "stdout", Seq: int64(i + 1), Data: data}); err != nil {
			return fmt.Errorf("logs: %w", err)
		}
	}
	_, err := a.cl.Finish(ctx, t.ID, api.FinishRequest{AttemptID: t.AttemptID, SubmissionID: t.AttemptID + "-finish"})
	return err
}

func (e *env) reportS8(f s8Figures) {
	e.report.detail("s8", f)
	var rss, heap []string
	for _, n := range f.Nodes {
		rss = append(rss, fmt.Sprintf("%+.0f", n.GrowthMB))
		heap = append(heap, fmt.Sprintf("%+.0f", n.HeapGrowthMB))
	}
	e.report.add(Row{
		Scenario: "S8", Metric: fmt.Sprintf("coordinator RSS growth after %.0f MiB of task output over %d tasks (per coordinator, after GC)", f.TotalMiB, f.Tasks),
		Value:     fmt.Sprintf("%s MB (Go heap %s MB)", strings.Join(rss, " / "), strings.Join(heap, " / ")),
		Reference: fmt.Sprintf("output volume %.0f MiB; one job's %.1f MiB read back", f.TotalMiB, f.ReadBackMiB),
		Target:    "≤ 20 MB", Met: e.judged(f.MaxGrowthMB <= 20),
	})
}
