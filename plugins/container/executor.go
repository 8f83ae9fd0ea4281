package container

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/gpulayer/gpulayer/sdk/executor"
	"github.com/gpulayer/gpulayer/sdk/executor/logbuf"
	"github.com/gpulayer/gpulayer/sdk/executor/tasktable"
)

// Name is the executor's name, as jobs and the plugin registry spell it.
const Name = "container"

// Version is reported by Info.
const Version = "1.0.0"

// ErrKilled is wrapped by the error of a Start after KillAll.
var ErrKilled = errors.New("container: the executor removed its containers and takes no more")

// Options tune an Executor. The zero value is usable.
type Options struct {
	// Logger receives the executor's own logs; nil means slog.Default().
	Logger *slog.Logger
	// LogLimit caps the output kept per task in bytes; zero means
	// logbuf.DefaultLimit.
	LogLimit int
	// MaxEnded is how many ended tasks are remembered; zero means 128.
	MaxEnded int
	// DrainTimeout bounds how long, after a container ended, its output
	// may take to arrive; zero means 5 seconds.
	DrainTimeout time.Duration
}

// Executor runs tasks as Docker containers. It is safe for concurrent use.
type Executor struct {
	opts Options

	dialOnce sync.Once
	eng      engine
	dialErr  error

	tasks *tasktable.Table[*task]

	mu     sync.Mutex
	reaped map[string]bool // agent keys whose orphans were removed
}

var _ executor.Executor = (*Executor)(nil)

// New returns an Executor that talks to the daemon the environment names
// (Dial), connecting at its first task.
func New(opts Options) *Executor {
	return newWith(opts, nil)
}

// newWith returns an Executor using eng (nil: Dial at first use).
func newWith(opts Options, eng engine) *Executor {
	if opts.LogLimit <= 0 {
		opts.LogLimit = logbuf.DefaultLimit
	}
	if opts.MaxEnded <= 0 {
		opts.MaxEnded = 128
	}
	if opts.DrainTimeout <= 0 {
		opts.DrainTimeout = 5 * time.Second
	}
	e := &Executor{opts: opts, tasks: tasktable.New[*task](Name, opts.MaxEnded), reaped: map[string]bool{}}
	if eng != nil {
		e.eng = eng
		e.dialOnce.Do(func() {})
	}
	return e
}

func (e *Executor) log() *slog.Logger {
	l := e.opts.Logger
	if l == nil {
		l = slog.Default()
	}
	return l.With("component", "executor", "executor", Name)
}

func (e *Executor) engine() (engine, error) {
	e.dialOnce.Do(func() {
		c, err := Dial()
		e.eng, e.dialErr = c, err
	})
	return e.eng, e.dialErr
}

// Info implements executor.Executor.
func (e *Executor) Info(context.Context) (executor.Info, error) {
	return executor.Info{Name: Name, Version: Version}, nil
}

// Start implements executor.Executor: it resolves the image and the GPUs,
// creates the container, attaches to its output and starts it. A failure
// after the container was created removes it.
func (e *Executor) Start(ctx context.Context, t executor.Task) error {
	cfg, err := ParseConfig(t.Config)
	if err != nil {
		return fmt.Errorf("container: start task %s: %w", t.ID, err)
	}
	eng, err := e.engine()
	if err != nil {
		return fmt.Errorf("container: start task %s: docker client: %w", t.ID, err)
	}
	if err := e.tasks.Reserve(t.ID); err != nil {
		return fmt.Errorf("container: start task %s: %w", t.ID, err)
	}
	e.reapOnce(ctx, eng, agentKey(t))
	tk, err := e.startTask(ctx, eng, t, cfg)
	killed := e.tasks.Settle(t.ID, tk, err == nil)
	if err != nil {
		return fmt.Errorf("container: start task %s: %w", t.ID, err)
	}
	if killed {
		tk.remove(e.eng)
	}
	e.log().Debug("task started", "attempt_id", t.ID, "task_id", t.TaskID, "container", tk.containerID)
	go e.reap(tk)
	return nil
}

// reap waits for a task's container to end, then records it as ended.
func (e *Executor) reap(tk *task) {
	res := tk.wait(e.eng, e.opts.DrainTimeout, e.log())
	e.log().Debug("task ended", "attempt_id", tk.id, "exit_code", res.ExitCode, "reason", res.Reason)
	e.tasks.Ended(tk.id)
	close(tk.done)
}

// Wait implements executor.Executor.
func (e *Executor) Wait(ctx context.Context, id string) (executor.Result, error) {
	return e.tasks.Wait(ctx, id)
}

// Stop implements executor.Executor: the daemon sends the container its
// stop signal (SIGTERM) and SIGKILL once grace has passed; the container
// is then removed. It returns when the task has ended, or ctx's error.
func (e *Executor) Stop(ctx context.Context, id string, grace time.Duration) error {
	tk, err := e.tasks.Get(id)
	if err != nil {
		return err
	}
	tk.stop(e.eng, grace, e.log())
	return tasktable.Ended(ctx, tk)
}

// Logs implements executor.Executor.
func (e *Executor) Logs(ctx context.Context, id string, send func(executor.LogChunk) error) error {
	tk, err := e.tasks.Get(id)
	if err != nil {
		return err
	}
	return tk.logs.Follow(ctx, send)
}

// KillAll removes every running task's container at once (killing it) and
// makes later Starts fail with ErrKilled: for a plugin about to exit
// without its agent (plugins.ServeBuiltin), so that no container is left
// holding GPUs handed out again. It waits for the tasks to end at most
// killAllWait.
func (e *Executor) KillAll() {
	tks := e.tasks.Close(ErrKilled)
	// All at once: the agent gives a closing plugin two seconds.
	var wg sync.WaitGroup
	for _, tk := range tks {
		tk.stopping.Store(true)
		wg.Go(func() { tk.remove(e.eng) })
	}
	wg.Wait()
	timeout := time.NewTimer(killAllWait)
	defer timeout.Stop()
	for _, tk := range tks {
		select {
		case <-tk.done:
		case <-timeout.C:
			e.log().Warn("containers not ended in time after KillAll", "waited", killAllWait)
			return
		}
	}
}

const killAllWait = 10 * time.Second

// keepPaths are the sandbox's Keep paths that exist (a bind mount of a
// missing path fails the container).
func keepPaths(keep []string) []string {
	var out []string
	for _, k := range keep {
		if _, err := os.Stat(k); err == nil {
			out = append(out, k)
		}
	}
	return out
}
