package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// submitter submits the scenario's jobs in the background, at a steady
// pace and a few at a time. Each job has an idempotency key, so a submit
// retried after a lost answer returns the job the first one created
// instead of a second job.
type submitter struct {
	s     *scenario
	n     int
	pace  time.Duration
	gates map[int]chan struct{}

	acked   atomic.Int64
	retries atomic.Int64

	mu  sync.Mutex
	ids []string
	err error

	done chan struct{}
}

func newSubmitter(s *scenario, n int, pace time.Duration) *submitter {
	return &submitter{s: s, n: n, pace: pace, gates: map[int]chan struct{}{}, ids: make([]string, n), done: make(chan struct{})}
}

// gate makes the loop wait, before submitting job i, until open is called.
func (sub *submitter) gate(i int) (open func()) {
	ch := make(chan struct{})
	sub.gates[i] = ch
	var once sync.Once
	return func() { once.Do(func() { close(ch) }) }
}

// run feeds job numbers to a few concurrent submitters at the configured
// pace, holding back at the gates. Several in flight keep jobs flowing
// while one submit waits out a failover.
func (sub *submitter) run(ctx context.Context) {
	defer close(sub.done)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan int)
	var wg sync.WaitGroup
	for range submitConcurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				id, err := sub.submit(ctx, i)
				if err != nil {
					sub.fail(err)
					cancel()
					continue
				}
				sub.mu.Lock()
				sub.ids[i] = id
				sub.mu.Unlock()
				sub.acked.Add(1)
			}
		}()
	}
	defer wg.Wait()
	defer close(next)
	tick := time.NewTicker(sub.pace)
	defer tick.Stop()
	for i := range sub.n {
		if g, ok := sub.gates[i]; ok {
			select {
			case <-g:
			case <-ctx.Done():
				sub.fail(fmt.Errorf("job %d: %w", i, ctx.Err()))
				return
			}
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			sub.fail(fmt.Errorf("job %d: %w", i, ctx.Err()))
			return
		}
		select {
		case next <- i:
		case <-ctx.Done():
			sub.fail(fmt.Errorf("job %d: %w", i, ctx.Err()))
			return
		}
	}
}

// submitConcurrency is how many submits may be in flight at once.
const submitConcurrency = 4

// jobLease is the lease of every scenario job: short, so that an
// assignment whose answer was lost in a failover lapses and is handed out
// again well within the scenario's deadlines. Heartbeats renew it every
// two seconds while a task runs.
const jobLease = 15 * time.Second

// fail records the first error.
func (sub *submitter) fail(err error) {
	sub.mu.Lock()
	if sub.err == nil {
		sub.err = err
	}
	sub.mu.Unlock()
}

func (sub *submitter) result() ([]string, error) {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	return append([]string(nil), sub.ids...), sub.err
}

func (sub *submitter) spec(i int) api.JobSpec {
	cfg, _ := json.Marshal(map[string]any{"message": fmt.Sprintf("job %d", i), "repeat": 1})
	return api.JobSpec{
		Name:           fmt.Sprintf("cluster-%03d", i),
		Executor:       "echo",
		Config:         cfg,
		TimeoutSeconds: 60,
		LeaseSeconds:   int(jobLease / time.Second),
		IdempotencyKey: fmt.Sprintf("%s-%03d", sub.s.cfg.runID, i),
	}
}

// submit submits job i until it is acknowledged. Refusals that a retry
// cannot change end the scenario.
func (sub *submitter) submit(ctx context.Context, i int) (string, error) {
	spec := sub.spec(i)
	backoff := 100 * time.Millisecond
	for try := 1; ; try++ {
		actx, cancel := context.WithTimeout(ctx, 25*time.Second)
		job, err := sub.s.client.SubmitJob(actx, spec)
		cancel()
		if err == nil {
			if job.ID == "" {
				return "", fmt.Errorf("job %d: the submit answer carries no job id", i)
			}
			if try > 1 {
				sub.s.logf("job %d acknowledged as %s after %d tries", i, job.ID, try)
			}
			return job.ID, nil
		}
		for _, code := range []api.Code{api.CodeInvalidArgument, api.CodeConflict, api.CodeUnauthenticated, api.CodeForbidden, api.CodeProtocolMismatch} {
			if client.IsCode(err, code) {
				return "", fmt.Errorf("job %d: submit refused: %w", i, err)
			}
		}
		if ctx.Err() != nil {
			return "", fmt.Errorf("job %d: not acknowledged: %w (last error: %v)", i, ctx.Err(), err)
		}
		sub.retries.Add(1)
		if try == 1 || try%10 == 0 {
			sub.s.logf("job %d: submit try %d failed, retrying: %v", i, try, err)
		}
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
		}
		backoff = min(2*backoff, time.Second)
	}
}
