// Package executor is the contract between the GpuLayer agent and executor
// plugins. A plugin author implements Executor and calls Serve from main;
// the agent launches the plugin as its own process (hashicorp/go-plugin over
// gRPC) and drives it through the same interface.
//
// This package depends only on the standard library, go-plugin, grpc and
// protobuf.
package executor

import (
	"context"
	"errors"
	"time"
)

// Task is what the agent asks an executor to run. One plugin process may
// run many tasks, concurrently and one after another; they are told apart by
// ID (the attempt id, unique per assignment).
type Task struct {
	// ID identifies this run (the attempt id); it keys Wait, Stop and Logs.
	ID string
	// TaskID and JobID name the task for logs and environment.
	TaskID string
	JobID  string
	// Config is the job's executor config, raw JSON.
	Config []byte
	// Env is the environment the agent requires for the task, including
	// CUDA_VISIBLE_DEVICES (GPU UUIDs, comma separated, or empty for none).
	// Plugins must apply it on top of their own config's env.
	Env map[string]string
	// Devices are the GPU UUIDs assigned to the task.
	Devices []string
	// WorkDir is a scratch directory the agent made for the task.
	WorkDir string
}

// Result is how a task ended.
type Result struct {
	ExitCode int
	// Output is optional JSON the task produced, passed on with finish.
	Output []byte
	// Reason explains an abnormal end (signal, stopped, failed to start).
	Reason string
}

// LogChunk is a piece of output from a task.
type LogChunk struct {
	// Stream is "stdout" or "stderr".
	Stream string
	Data   []byte
}

// Info describes a plugin.
type Info struct {
	Name    string
	Version string
}

// Executor is implemented by plugins. All methods must be safe for
// concurrent use and must respect ctx: a call whose ctx ends returns
// ctx.Err() (possibly wrapped).
//
// Wait, Stop and Logs return ErrUnknownTask for an id that was never
// started (including one whose Start failed); an executor may also forget
// tasks that ended long ago, which then read as unknown. Serve carries the sentinel
// errors across the wire, so errors.Is works on the agent's side too.
// executortest.Run checks an implementation against this contract.
type Executor interface {
	// Info names the plugin.
	Info(ctx context.Context) (Info, error)
	// Start launches the task and returns once it runs (or failed to
	// start). It must not wait for the task to end. An ID already
	// started, running or ended, is refused with ErrDuplicateTask; an
	// unusable Config with an error wrapping ErrInvalidConfig that says
	// what is wrong.
	Start(ctx context.Context, task Task) error
	// Wait blocks until the task ends and returns its result. It may be
	// called more than once and returns the same result each time.
	Wait(ctx context.Context, id string) (Result, error)
	// Stop asks the task to end: a polite signal first, then a forced kill
	// once grace has passed. It returns when the task has ended. Stopping
	// a task that has already ended is not an error. A stopped task's
	// Result should not look like success: a non-zero ExitCode or a
	// Reason.
	Stop(ctx context.Context, id string, grace time.Duration) error
	// Logs delivers the task's output in order to send, from the start,
	// and returns when the task has ended and all output was delivered, or
	// when ctx ends or send fails (returning send's error). Order is kept
	// per stream. send must not modify a chunk's Data.
	Logs(ctx context.Context, id string, send func(LogChunk) error) error
}

// Sentinel errors shared by plugins and the host.
var (
	// ErrUnknownTask is returned for an id the executor has not started.
	ErrUnknownTask = errors.New("executor: unknown task")
	// ErrDuplicateTask is returned by Start for an id already started.
	ErrDuplicateTask = errors.New("executor: task already started")
	// ErrInvalidConfig is returned by Start when the config is unusable.
	// It is permanent (IsPermanent): the task fails without a retry.
	ErrInvalidConfig = errors.New("executor: invalid config")
	// ErrPermanent marks a failure that no retry of the task can fix (a
	// command that does not exist, a model file missing from the image):
	// the task fails at once instead of using up its attempts. Wrap an
	// error with Permanent.
	ErrPermanent = errors.New("executor: permanent failure")
)

// Permanent marks err as a failure no retry can fix (nil stays nil).
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanentError{err}
}

type permanentError struct{ err error }

func (e *permanentError) Error() string   { return e.err.Error() }
func (e *permanentError) Unwrap() []error { return []error{e.err, ErrPermanent} }

// IsPermanent reports whether err says that no retry of the task can
// succeed: it wraps ErrPermanent or ErrInvalidConfig.
func IsPermanent(err error) bool {
	return errors.Is(err, ErrPermanent) || errors.Is(err, ErrInvalidConfig)
}
