package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gpulayer/gpulayer/bench/stats"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// workload is the acquire → start → finish loop the simulated agents run,
// and what it records.
type workload struct {
	tr                     *tracker
	wait                   int // acquire long-poll seconds
	acquire, start, finish stats.Recorder
	heartbeats             stats.Recorder
	// hold, when set, is waited on between start and finish (S4 holders).
	hold <-chan struct{}
	// acquired, when set, is told of every task received.
	acquired func(a api.Assignment)

	staleFinishes atomic.Int64
	mu            sync.Mutex
	lastErr       error
}

func newWorkload(tr *tracker, wait int) *workload { return &workload{tr: tr, wait: wait} }

func (w *workload) noteErr(err error) {
	w.mu.Lock()
	w.lastErr = err
	w.mu.Unlock()
}

// run drives one agent until ctx ends. A task it has received is always
// carried to its finish, even after ctx ends.
func (w *workload) run(ctx context.Context, a *simAgent) {
	bg := context.WithoutCancel(ctx)
	for ctx.Err() == nil {
		t0 := time.Now()
		resp, err := a.cl.Acquire(ctx, api.AcquireRequest{WaitSeconds: w.wait})
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			w.acquire.Error()
			w.noteErr(err)
			select { // pace retries; the client already backed off
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
			continue
		}
		if resp.Task == nil {
			continue
		}
		w.acquire.Add(time.Since(t0))
		task := *resp.Task
		if w.acquired != nil {
			w.acquired(task)
		}
		w.tr.received(task.ID, task.AttemptID)
		a.setRunning(task.ID, true)
		t1 := time.Now()
		if err := a.cl.Start(bg, task.ID, task.AttemptID); err != nil {
			w.start.Error()
			w.noteErr(err)
		} else {
			w.start.Add(time.Since(t1))
		}
		if w.hold != nil {
			<-w.hold
		}
		t2 := time.Now()
		_, err = a.cl.Finish(bg, task.ID, api.FinishRequest{AttemptID: task.AttemptID, SubmissionID: task.AttemptID + "-finish", ExitCode: 0})
		switch {
		case err == nil:
			w.finish.Add(time.Since(t2))
		case client.IsCode(err, api.CodeStaleAttempt):
			w.staleFinishes.Add(1)
			w.finish.Error()
		default:
			w.finish.Error()
			w.noteErr(err)
		}
		a.setRunning(task.ID, false)
		w.tr.finished(task.ID)
	}
}

// start runs every agent's work loop and heartbeat loop until the
// returned stop is called; stop waits for them.
func (w *workload) startAgents(ctx context.Context, agents []*simAgent) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for _, a := range agents {
		wg.Go(func() { a.heartbeatLoop(ctx, &w.heartbeats) })
		wg.Go(func() { w.run(ctx, a) })
	}
	return func() {
		cancel()
		wg.Wait()
	}
}

// execSpec is the job every throughput scenario submits: one task of the
// built-in exec executor (which the simulated agents do not run).
func execSpec(key string, leaseSeconds int) api.JobSpec {
	cfg, _ := json.Marshal(api.ExecConfig{Command: "true"})
	return api.JobSpec{Name: "bench", Executor: "exec", Config: cfg, Count: 1, LeaseSeconds: leaseSeconds, IdempotencyKey: key}
}

// submitter keeps at most outstanding tasks submitted but not finished,
// from conc goroutines.
type submitter struct {
	admin   *client.Client
	tr      *tracker
	prefix  string
	lease   int
	conc    int
	submits stats.Recorder
	n       atomic.Int64
	mu      sync.Mutex
	lastErr error
}

func (s *submitter) run(ctx context.Context) {
	var wg sync.WaitGroup
	for range s.conc {
		wg.Go(func() {
			for {
				select {
				case s.tr.slots <- struct{}{}:
				case <-ctx.Done():
					return
				}
				key := fmt.Sprintf("%s-%d", s.prefix, s.n.Add(1))
				t := time.Now()
				// Never abandon a submit half way: a job created but not
				// tracked would linger as work for later scenarios.
				job, err := s.admin.SubmitJob(context.WithoutCancel(ctx), execSpec(key, s.lease))
				if err != nil || len(job.Tasks) != 1 {
					<-s.tr.slots
					if ctx.Err() != nil {
						return
					}
					s.submits.Error()
					s.mu.Lock()
					s.lastErr = fmt.Errorf("submit: %v (%d tasks)", err, len(job.Tasks))
					s.mu.Unlock()
					continue
				}
				s.submits.Add(time.Since(t))
				s.tr.submitted(job.Tasks[0].ID, job.ID)
			}
		})
	}
	wg.Wait()
}
