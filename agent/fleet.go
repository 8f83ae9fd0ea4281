package agent

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// Fleet control on the agent's side. The coordinator's heartbeat and
// acquire answers carry a command: drain (take no new task; running ones
// go on until the coordinator asks them to stop), stop (the same, with
// every task asked to stop now; the agent exits 0 once it holds none) or
// none. The agent can also drain itself (at SIGTERM) or deregister, and
// then exits 0 once idle.

// errFinished ends Run without an error: the worker was stopped, drained
// itself, or deregistered, and holds no task.
var errFinished = errors.New("agent: finished")

// orders is the coordinator's last command to this worker.
type orders struct {
	mu      sync.Mutex
	command string
	changed chan struct{} // closed and replaced at every change
	// asking: this agent is asking to drain itself, so a "none" that
	// crosses the request does not lift its drain; leaving: the
	// coordinator took the request, and the agent exits once it holds no
	// task; deregistering: it asked to be forgotten, so a refused
	// credential means that it was.
	asking, leaving, deregistering bool
}

func newOrders() *orders {
	return &orders{command: api.CommandNone, changed: make(chan struct{})}
}

// set records a command, and reports whether it changed. A leaving
// agent's drain is not lifted by an answer that crossed its request.
func (o *orders) set(command string) bool {
	if command == "" {
		command = api.CommandNone
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if (o.asking || o.leaving) && command == api.CommandNone {
		return false
	}
	if command == o.command {
		return false
	}
	o.command = command
	close(o.changed)
	o.changed = make(chan struct{})
	return true
}

// current is the command in force and a channel closed when it changes.
func (o *orders) current() (string, <-chan struct{}) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.command, o.changed
}

// exitWhenIdle reports whether the agent should end once it holds no
// task: it was stopped, or it is leaving.
func (o *orders) exitWhenIdle() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.command == api.CommandStop || o.leaving
}

func (o *orders) forgotten() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.deregistering
}

// heard applies a command from a coordinator's answer and logs a change.
func (a *Agent) heard(command string) {
	if a.orders.set(command) {
		switch command {
		case api.CommandDrain:
			a.log.Info("worker draining: taking no new task; running tasks go on until the coordinator stops them")
		case api.CommandStop:
			a.log.Info("worker stopping: running tasks are stopped and handed back; the agent exits once it holds none")
		default:
			a.log.Info("worker ready again: taking tasks")
		}
	}
}

// Leave drains this worker (deregister false) or deregisters it, with
// deadline for its running tasks, after which the coordinator stops them
// and hands them out again without using up an attempt. Run then returns
// nil once the agent holds no task. The agent takes no new task from the
// moment Leave is called. An error means the coordinator did not take
// the request; the caller may then stop the agent outright.
func (a *Agent) Leave(ctx context.Context, deregister bool, deadline time.Duration) error {
	select { // a worker still registering is asked once it has a credential
	case <-a.identified:
	case <-ctx.Done():
		return fmt.Errorf("agent: the worker has no credential yet: %w", context.Cause(ctx))
	}
	a.orders.mu.Lock()
	a.orders.asking = true
	a.orders.mu.Unlock()
	a.orders.set(api.CommandDrain)
	secs := int(deadline / time.Second)
	var err error
	if deregister {
		_, err = a.client.Deregister(ctx, &secs)
	} else {
		_, err = a.client.DrainSelf(ctx, &secs)
	}
	if err != nil {
		return fmt.Errorf("agent: asking the coordinator to drain this worker: %w", err)
	}
	a.orders.mu.Lock()
	a.orders.leaving = true
	a.orders.deregistering = deregister
	a.orders.mu.Unlock()
	a.log.Info("worker draining itself", "deregister", deregister, "deadline", deadline)
	select {
	case a.wake <- struct{}{}: // a heartbeat now sees whether it is idle
	default:
	}
	return nil
}

// resumeOwnDrain lifts, at start-up, a drain this worker's agent asked
// for before it last exited (a SIGTERM): the worker is back. A drain or
// stop an admin made stays until an admin resumes the worker.
func (a *Agent) resumeOwnDrain(ctx context.Context) {
	w, err := a.client.Self(ctx)
	if err != nil {
		a.log.Warn("reading this worker's status", "error", err)
		return
	}
	switch {
	case w.Status != api.WorkerDraining && w.Status != api.WorkerStopping:
		return
	case w.DrainedBy != api.DrainedBySelf:
		a.log.Warn("this worker was "+w.Status+" by an admin; it takes no task until resumed", "by", w.DrainedBy, "command", "gpulayer worker resume "+w.WorkerID)
		return
	}
	if _, err := a.client.ResumeSelf(ctx); err != nil {
		a.log.Warn("lifting this worker's own drain", "error", err)
		return
	}
	a.log.Info("lifted the drain this worker's agent asked for before it last stopped")
}
