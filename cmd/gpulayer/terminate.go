package main

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gpulayer/gpulayer/agent"
)

// SIGTERM, by default, ends a command as SIGINT does: its context is
// cancelled. A command that has a gentler way to end (an agent drains its
// worker first) installs a handler with onTerminate while it runs.

var termHandler atomic.Pointer[func()]

// leaveTimeout bounds the agent's drain request at SIGTERM.
const leaveTimeout = 15 * time.Second

// handleSIGTERM dispatches each SIGTERM to the installed handler, or
// else calls cancel. stop undoes it.
func handleSIGTERM(cancel context.CancelFunc) (stop func()) {
	ch := make(chan os.Signal, 4)
	signal.Notify(ch, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-ch:
				if h := termHandler.Load(); h != nil {
					(*h)()
				} else {
					cancel()
				}
			case <-done:
				return
			}
		}
	}()
	return func() { signal.Stop(ch); close(done) }
}

// onTerminate makes h the SIGTERM handler until the returned func runs.
func onTerminate(h func()) (restore func()) {
	termHandler.Store(&h)
	return func() { termHandler.Store(nil) }
}

// drainOnSIGTERM is the agent's SIGTERM handler: the first drains (or,
// with --leave-on-terminate, deregisters) the worker, so that its tasks
// end or are handed back without using up an attempt and the agent then
// exits 0; the next one, or a drain the coordinator does not take, stops
// the agent at once.
func drainOnSIGTERM(ctx context.Context, cancel context.CancelFunc, a *agent.Agent, f agentFlags, log *slog.Logger) func() {
	var n atomic.Int32
	return func() {
		if n.Add(1) > 1 {
			log.Info("SIGTERM again: stopping now; running tasks are stopped and handed back")
			cancel()
			return
		}
		log.Info("SIGTERM: draining this worker; SIGTERM again or SIGINT stops at once", "deadline", f.drainDeadline, "deregister", f.leaveOnTerminate)
		go func() {
			// A coordinator that cannot be reached must not hold the
			// agent: past this, it stops at once.
			lctx, cancelLeave := context.WithTimeout(ctx, leaveTimeout)
			defer cancelLeave()
			if err := a.Leave(lctx, f.leaveOnTerminate, f.drainDeadline); err != nil {
				log.Error("SIGTERM: the drain was not taken; stopping now", "error", err)
				cancel()
			}
		}()
	}
}
