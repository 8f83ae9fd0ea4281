package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// taskRec is what the benchmark knows about one task.
type taskRec struct {
	jobID     string
	submitted bool
	received  time.Time
	attempts  []string
	finished  bool
	ghost     bool
	recv      chan struct{} // closed at the first receipt
	done      chan struct{} // closed at the first finish
}

// tracker follows every task from submit to finish. slots bounds the
// tasks submitted but not finished.
type tracker struct {
	slots chan struct{}

	mu       sync.Mutex
	recs     map[string]*taskRec
	finishes int
}

func newTracker(outstanding int) *tracker {
	return &tracker{slots: make(chan struct{}, outstanding), recs: map[string]*taskRec{}}
}

func (t *tracker) recLocked(id string) *taskRec {
	r, ok := t.recs[id]
	if !ok {
		r = &taskRec{recv: make(chan struct{}), done: make(chan struct{})}
		t.recs[id] = r
	}
	return r
}

// rec returns the record of a task, creating it.
func (t *tracker) rec(id string) *taskRec {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.recLocked(id)
}

func (t *tracker) submitted(id, jobID string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := t.recLocked(id)
	r.submitted, r.jobID = true, jobID
}

func (t *tracker) received(id, attempt string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := t.recLocked(id)
	if r.received.IsZero() {
		r.received = time.Now()
		close(r.recv)
	}
	r.attempts = append(r.attempts, attempt)
}

func (t *tracker) finished(id string) {
	t.mu.Lock()
	r := t.recLocked(id)
	if !r.finished {
		r.finished = true
		close(r.done)
		t.finishes++
	}
	t.mu.Unlock()
	select { // free the submitter's slot
	case <-t.slots:
	default:
	}
}

// hadAttempt reports whether an agent received the task under attempt.
func (t *tracker) hadAttempt(id, attempt string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	r, ok := t.recs[id]
	return ok && slices.Contains(r.attempts, attempt)
}

// finishedCount is how many distinct tasks have finished.
func (t *tracker) finishedCount() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.finishes
}

// openTask is a copy of what is known about a task still open.
type openTask struct {
	jobID    string
	received bool
	attempts []string
}

// pending lists submitted tasks that neither finished nor turned out to be
// ghosts, as copies.
func (t *tracker) pending() map[string]openTask {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := map[string]openTask{}
	for id, r := range t.recs {
		if r.submitted && !r.finished && !r.ghost {
			out[id] = openTask{jobID: r.jobID, received: !r.received.IsZero(), attempts: slices.Clone(r.attempts)}
		}
	}
	return out
}

func (t *tracker) markGhost(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.recLocked(id).ghost = true
}

// drainResult says how the tasks still open at the end were resolved.
type drainResult struct {
	// ghosts are tasks still assigned under an attempt that no agent
	// received (an acquire answer lost with a killed leader), long after
	// the assignment.
	ghosts int
}

// ghostAfter is how long an assignment must have gone unclaimed before it
// counts as a ghost still held: an agent that got the answer records it at
// once (but the answer may still be on its way when the drain looks), and a
// coordinator that renews only reported tasks lets a ghost's lease lapse
// (lease + grace, 6 s in S4) and retries the task before this.
const ghostAfter = 15 * time.Second

// drain waits until every submitted task has finished or is a ghost. A
// task still pending (or unknown) when timeout passes is a functional
// error.
func (t *tracker) drain(ctx context.Context, admin *client.Client, timeout time.Duration) (drainResult, error) {
	var res drainResult
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		open := t.pending()
		if len(open) == 0 {
			return res, nil
		}
		var stuck []string
		for id, r := range open {
			if r.received {
				stuck = append(stuck, id+" (received, not finished)")
				continue
			}
			job, err := admin.Job(ctx, r.jobID)
			if err != nil || len(job.Tasks) == 0 {
				stuck = append(stuck, fmt.Sprintf("%s (lookup: %v)", id, err))
				continue
			}
			task := job.Tasks[0]
			if task.State == api.TaskAssigned && !slices.Contains(r.attempts, task.AttemptID) && assignedBefore(task, time.Now().Add(-ghostAfter)) {
				t.markGhost(id)
				res.ghosts++
				continue
			}
			stuck = append(stuck, id+" ("+task.State+")")
		}
		if len(stuck) == 0 {
			continue
		}
		if time.Now().After(deadline) {
			slices.Sort(stuck)
			return res, fmt.Errorf("%d tasks never completed: %s", len(stuck), strings.Join(stuck[:min(len(stuck), 5)], ", "))
		}
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case <-tick.C:
		}
	}
}

// assignedBefore reports whether a task's current attempt was assigned
// before t.
func assignedBefore(task api.Task, t time.Time) bool {
	for _, a := range task.Attempts {
		if a.AttemptID == task.AttemptID {
			at, err := api.ParseTime(a.AssignedAt)
			return err == nil && at.Before(t)
		}
	}
	return false
}
