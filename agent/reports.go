package agent

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/gpulayer/gpulayer/agent/runner"
	"github.com/gpulayer/gpulayer/agent/spool"
	"github.com/gpulayer/gpulayer/internal/clock"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// Reports outlive outages. An attempt's finish or failure goes into the
// spool (agent/spool) before anything is sent, and the report queue
// delivers the spool's records, oldest first, until a coordinator
// acknowledges each or refuses it for good:
//
//   - acknowledged (2xx): the record is removed;
//   - refused (a 4xx of the contract: stale_attempt, not_claimed,
//     not_found, …): the coordinator has moved on, the attempt's report can
//     never be taken, and the record is removed with a warning;
//   - no coordinator could take it (unreachable, no leader, rate limited,
//     the credential refused for now) or one failed under it (internal):
//     the record stays and is tried again, with a growing pause.
//
// While records wait, the agent names their tasks in its heartbeats, as it
// names the tasks it runs, so their leases hold until the report lands;
// and it asks for no new task until every waiting record was tried since
// it last changed (reports go first after an outage) and the spool is
// below its bounds (a full spool takes no new work, it never drops a
// report).
type reportQueue struct {
	spool *spool.Spool
	send  reportSender
	clock clock.Clock
	log   *slog.Logger
	wake  chan struct{}

	mu      sync.Mutex
	tried   map[string]bool // attempts tried since their record was put
	changed chan struct{}   // closed and replaced when the queue changes
}

// reportSender is the part of the client the queue uses.
type reportSender interface {
	Finish(ctx context.Context, taskID string, req api.FinishRequest) (api.Task, error)
	Fail(ctx context.Context, taskID string, req api.FailRequest) (api.Task, error)
}

var _ runner.Reports = (*reportQueue)(nil)

// Report delivery pauses after a try that reached no coordinator.
const (
	reportRetryMin = 100 * time.Millisecond
	reportRetryMax = 5 * time.Second
)

func newReportQueue(s *spool.Spool, send reportSender, c clock.Clock, log *slog.Logger) *reportQueue {
	return &reportQueue{spool: s, send: send, clock: c, log: log, wake: make(chan struct{}, 1), tried: map[string]bool{}, changed: make(chan struct{})}
}

// Report keeps rep in the spool and wakes the delivery loop. A report
// the spool cannot keep (its disk failed) is sent at once instead, as
// before there was a spool.
func (q *reportQueue) Report(ctx context.Context, rep runner.Report) error {
	rec := spool.Record{TaskID: rep.TaskID, Finish: rep.Finish, Fail: rep.Fail, LastLogSeq: rep.LastLogSeq, WrittenAt: q.clock.Now().UTC()}
	switch {
	case rep.Finish != nil:
		rec.AttemptID = rep.Finish.AttemptID
	case rep.Fail != nil:
		rec.AttemptID = rep.Fail.AttemptID
	}
	if err := q.spool.Put(rec); err != nil {
		q.log.Error("the report spool could not keep a report; sending it at once", "task_id", rep.TaskID, "attempt_id", rec.AttemptID, "error", err)
		if q.deliver(ctx, rec) != delivered {
			return err
		}
		return nil
	}
	q.note(func() { delete(q.tried, rec.AttemptID) })
	select {
	case q.wake <- struct{}{}:
	default:
	}
	return nil
}

// note changes the queue's state under its lock and tells the waiters.
func (q *reportQueue) note(change func()) {
	q.mu.Lock()
	change()
	close(q.changed)
	q.changed = make(chan struct{})
	q.mu.Unlock()
}

// run delivers records until ctx ends.
func (q *reportQueue) run(ctx context.Context) {
	pause := reportRetryMin
	for {
		var wait <-chan time.Time
		if q.pass(ctx) {
			pause = reportRetryMin
		} else {
			wait = q.clock.After(pause)
			pause = min(2*pause, reportRetryMax)
		}
		select {
		case <-ctx.Done():
			return
		case <-q.wake:
		case <-wait:
		}
	}
}

// pass tries each waiting record once, oldest first, and reports whether
// nothing is left to retry soon. It stops at the first record no
// coordinator could take: the others would fare no better.
func (q *reportQueue) pass(ctx context.Context) bool {
	settled := true
	for _, rec := range q.spool.Pending() {
		if ctx.Err() != nil {
			return false
		}
		v := q.deliver(ctx, rec)
		switch v {
		case delivered, refused:
			if err := q.spool.Remove(rec.AttemptID); err != nil {
				q.log.Error("removing a delivered report from the spool", "attempt_id", rec.AttemptID, "error", err)
			}
			q.note(func() { delete(q.tried, rec.AttemptID) })
		case failed:
			settled = false
			q.note(func() { q.tried[rec.AttemptID] = true })
		case unreachable:
			return false
		}
	}
	return settled
}

// verdict is how one delivery went.
type verdict int

const (
	delivered   verdict = iota // acknowledged
	refused                    // refused for good: drop it
	failed                     // a coordinator failed under it: retry later
	unreachable                // no coordinator took it: retry later
)

func (q *reportQueue) deliver(ctx context.Context, rec spool.Record) verdict {
	var err error
	cctx := client.FailFast(ctx)
	if rec.Finish != nil {
		_, err = q.send.Finish(cctx, rec.TaskID, *rec.Finish)
	} else {
		_, err = q.send.Fail(cctx, rec.TaskID, *rec.Fail)
	}
	v := classify(err)
	switch v {
	case refused:
		q.log.Warn("the coordinator refused an attempt's report; dropped", "task_id", rec.TaskID, "attempt_id", rec.AttemptID, "error", err)
	case failed:
		q.log.Warn("reporting an attempt's end failed; will retry", "task_id", rec.TaskID, "attempt_id", rec.AttemptID, "error", err)
	case unreachable:
		q.log.Debug("no coordinator took an attempt's report; will retry", "task_id", rec.TaskID, "attempt_id", rec.AttemptID, "error", err)
	}
	return v
}

// classify says what an answer to a report means for its record.
func classify(err error) verdict {
	var apiErr *api.Error
	switch {
	case err == nil:
		return delivered
	case client.Unavailable(err):
		return unreachable
	case !errors.As(err, &apiErr):
		return unreachable // the context ended, or a transport error
	case apiErr.Code == api.CodeInternal, apiErr.Code == api.CodeUnauthenticated, apiErr.Code == api.CodeWorkerPending:
		return failed // it may be taken later: a fault, a credential being repaired
	default:
		return refused
	}
}

// ready reports whether the agent may ask for new work: every waiting
// record has been tried since it was put, and the spool is below its
// bounds. The channel is closed at the queue's next change.
func (q *reportQueue) ready() (bool, <-chan struct{}) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, rec := range q.spool.Pending() {
		if !q.tried[rec.AttemptID] {
			return false, q.changed
		}
	}
	return !q.spool.Full(), q.changed
}

// waitReady waits until the agent may ask for new work (ready) or ctx
// ends.
func (q *reportQueue) waitReady(ctx context.Context) error {
	for {
		ok, changed := q.ready()
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-changed:
		}
	}
}

// taskIDs lists the tasks whose reports wait, for the heartbeat.
func (q *reportQueue) taskIDs() []string {
	var ids []string
	for _, rec := range q.spool.Pending() {
		ids = append(ids, rec.TaskID)
	}
	return ids
}

// flush tries every waiting record once more, until ctx ends: at
// shutdown, so that a task handed back is retried at once, not after its
// lease.
func (q *reportQueue) flush(ctx context.Context) {
	for !q.pass(ctx) && ctx.Err() == nil {
		select {
		case <-ctx.Done():
		case <-q.clock.After(reportRetryMin):
		}
	}
}
