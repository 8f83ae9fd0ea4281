package pluginhost

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/gpulayer/gpulayer/sdk/executor"
)

// exitGrace bounds how long a failed call waits for go-plugin to notice
// that the plugin process exited, after the connection broke.
const exitGrace = 5 * time.Second

// pluginExecutor is the agent's view of an executor in a plugin process.
// It turns the transport errors of a dead plugin into a CrashError.
type pluginExecutor struct {
	inst   *instance
	remote executor.Executor
}

var _ executor.Executor = (*pluginExecutor)(nil)

func (p *pluginExecutor) Info(ctx context.Context) (executor.Info, error) {
	info, err := p.remote.Info(ctx)
	return info, p.inst.check(ctx, err)
}

func (p *pluginExecutor) Start(ctx context.Context, task executor.Task) error {
	return p.inst.check(ctx, p.remote.Start(ctx, task))
}

func (p *pluginExecutor) Wait(ctx context.Context, id string) (executor.Result, error) {
	res, err := p.remote.Wait(ctx, id)
	return res, p.inst.check(ctx, err)
}

func (p *pluginExecutor) Stop(ctx context.Context, id string, grace time.Duration) error {
	return p.inst.check(ctx, p.remote.Stop(ctx, id, grace))
}

func (p *pluginExecutor) Logs(ctx context.Context, id string, send func(executor.LogChunk) error) error {
	var sendErr error
	err := p.remote.Logs(ctx, id, func(c executor.LogChunk) error {
		sendErr = send(c)
		return sendErr
	})
	if err != nil && sendErr != nil && errors.Is(err, sendErr) {
		return err // the caller's own error, not the plugin's
	}
	return p.inst.check(ctx, err)
}

// check classifies a call's error: the executor's own errors and the
// caller's cancellation pass through; a dead plugin becomes a CrashError.
func (i *instance) check(ctx context.Context, err error) error {
	if err == nil {
		i.sawAnswer()
		return nil
	}
	if errors.Is(err, executor.ErrUnknownTask) || errors.Is(err, executor.ErrDuplicateTask) ||
		executor.IsPermanent(err) {
		i.sawAnswer() // the plugin's own answer
		return err
	}
	if ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		return err
	}
	if i.isBroken() {
		return &CrashError{Executor: i.name, Exit: i.exitStatus(), Err: err, Panic: i.words.panicLine()}
	}
	if i.killed() {
		return fmt.Errorf("executor plugin %q was shut down: %w", i.name, ErrClosed)
	}
	if !i.client.Exited() && !connectionLost(err) {
		return err // an error the plugin returned
	}
	exited := i.waitExited(exitGrace)
	i.markBroken()
	crash := &CrashError{Executor: i.name, Exit: i.exitStatus(), Err: err, Panic: i.words.panicLine()}
	if !exited {
		// The connection is gone but the process lingers: end it, so the
		// next Get starts afresh.
		crash.Exit = "connection lost"
		i.kill()
	}
	i.log.Error("executor plugin exited unexpectedly", "exit", crash.Exit, "error", err)
	return crash
}

// connectionLost reports whether err is gRPC's way of saying the plugin
// went away mid-call.
func connectionLost(err error) bool {
	switch status.Code(err) {
	case codes.Unavailable, codes.Canceled, codes.Internal:
		return true
	}
	return false
}

// waitExited waits up to d for go-plugin to see the process exit.
func (i *instance) waitExited(d time.Duration) bool {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !i.client.Exited() {
		select {
		case <-deadline.C:
			return false
		case <-tick.C:
		}
	}
	return true
}
