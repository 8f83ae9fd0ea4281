package container

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"sync/atomic"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/executor"
	"github.com/gpulayer/gpulayer/sdk/executor/logbuf"
)

// task is one container, running or ended.
type task struct {
	id          string
	containerID string
	// user is the container's user, uid:gid, which an exec runs as too.
	user     string
	logs     *logbuf.Buffer
	copied   chan struct{} // closed once the output stream ended
	stopping atomic.Bool
	done     chan struct{} // closed once result is set
	result   executor.Result
}

// Done and Result make a task a tasktable.Task.
func (tk *task) Done() <-chan struct{}   { return tk.done }
func (tk *task) Result() executor.Result { return tk.result }

// opTimeout bounds each daemon call made outside a caller's ctx.
const opTimeout = 30 * time.Second

// startTask creates, attaches to and starts t's container.
func (e *Executor) startTask(ctx context.Context, eng engine, t executor.Task, cfg api.ContainerConfig) (*task, error) {
	user, err := identity(t)
	if err != nil {
		return nil, err
	}
	sb, _, err := executor.TaskSandbox(t)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", executor.ErrInvalidConfig, err)
	}
	sb.Keep = keepPaths(sb.Keep)
	wd, err := workingDir(cfg.WorkDir, t.WorkDir)
	if err != nil {
		return nil, err
	}
	gpu, err := e.planGPUs(ctx, eng, t)
	if err != nil {
		return nil, err
	}
	img, err := resolveImage(ctx, eng, cfg, t.WorkDir)
	if err != nil {
		return nil, err
	}
	cc, hc := containerConfig(runSpec{Task: t, Config: cfg, Image: img, User: user, WorkDir: wd, Sandbox: sb, GPU: gpu})
	// From here Start runs to its end whatever becomes of ctx: a create
	// abandoned half way may still make the container on the daemon's
	// side, and a started one must be known to be removed.
	opCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), opTimeout)
	defer cancel()
	name := containerName(t.ID)
	created, err := eng.ContainerCreate(opCtx, cc, hc, nil, nil, name)
	if err != nil {
		(&task{containerID: name}).remove(eng) // if the daemon made it anyway
		return nil, fmt.Errorf("creating the container: %w", err)
	}
	tk := &task{id: t.ID, containerID: created.ID, user: user, logs: logbuf.New(e.opts.LogLimit), copied: make(chan struct{}), done: make(chan struct{})}
	// The attached stream outlives Start: it carries the output.
	attach, err := eng.ContainerAttach(context.WithoutCancel(opCtx), created.ID, container.AttachOptions{Stream: true, Stdout: true, Stderr: true})
	if err == nil {
		err = eng.ContainerStart(opCtx, created.ID, container.StartOptions{})
		if err != nil {
			attach.Close()
		}
	}
	if err != nil {
		tk.remove(eng)
		return nil, fmt.Errorf("starting the container: %w", err)
	}
	go func() {
		defer close(tk.copied)
		defer attach.Close()
		_, _ = stdcopy.StdCopy(tk.logs.Writer("stdout"), tk.logs.Writer("stderr"), attach.Reader)
	}()
	return tk, nil
}

// planGPUs asks the daemon whether it resolves the agent's CDI names and
// plans the task's devices accordingly.
func (e *Executor) planGPUs(ctx context.Context, eng engine, t executor.Task) (gpuPlan, error) {
	if len(cdiNames(t)) == 0 {
		return gpuPlan{}, nil
	}
	v, err := eng.ServerVersion(ctx)
	if err != nil {
		return gpuPlan{}, fmt.Errorf("docker version: %w", err)
	}
	var dirs []string
	if daemonResolvesCDI(v.APIVersion, []string{cdiDir(t)}, cdiDir(t)) {
		info, err := eng.Info(ctx)
		if err != nil {
			return gpuPlan{}, fmt.Errorf("docker info: %w", err)
		}
		dirs = info.CDISpecDirs
	}
	return planGPUs(t, daemonResolvesCDI(v.APIVersion, dirs, cdiDir(t)))
}

// containerName is the container's name: gpulayer-<attempt>, with what a
// name cannot hold replaced.
func containerName(attempt string) string {
	return "gpulayer-" + strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '.' || r == '-' {
			return r
		}
		return '_'
	}, attempt)
}

// wait blocks until the container ends, lets its output drain, reads how
// it ended and removes it.
func (tk *task) wait(eng engine, drain time.Duration, log *slog.Logger) executor.Result {
	res := tk.exitOf(eng)
	timer := time.NewTimer(drain)
	select {
	case <-tk.copied:
		timer.Stop()
	case <-timer.C:
		tk.logs.Write("stderr", []byte("[gpulayer: the container's output did not end in time]\n"))
	}
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	if info, err := eng.ContainerInspect(ctx, tk.containerID); err == nil && info.State != nil && info.State.OOMKilled {
		res.Reason = "out of memory: the container reached its memory limit"
	}
	cancel()
	tk.remove(eng)
	if tk.stopping.Load() {
		if res.Reason == "" {
			res.Reason = "stopped"
		} else {
			res.Reason = "stopped: " + res.Reason
		}
	}
	tk.result = res
	tk.logs.Close()
	log.Debug("container removed", "attempt_id", tk.id, "container", tk.containerID)
	return res
}

// exitOf waits for the container to stop running and returns its exit
// code; a container gone (removed by KillAll) reads as killed.
func (tk *task) exitOf(eng engine) executor.Result {
	for {
		ch, errs := eng.ContainerWait(context.Background(), tk.containerID, container.WaitConditionNotRunning)
		select {
		case w := <-ch:
			res := executor.Result{ExitCode: int(w.StatusCode)}
			if w.Error != nil && w.Error.Message != "" {
				res.Reason = w.Error.Message
			}
			return res
		case err := <-errs:
			if isGone(err) {
				return executor.Result{ExitCode: 137, Reason: "the container was removed"}
			}
			// The daemon connection broke (a daemon restart): ask again.
			select {
			case <-tk.copied:
			case <-time.After(time.Second):
			}
			if !tk.alive(eng) {
				return executor.Result{ExitCode: -1, Reason: fmt.Sprintf("waiting for the container failed: %v", err)}
			}
		}
	}
}

// alive reports whether the container is still there and running.
func (tk *task) alive(eng engine) bool {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	info, err := eng.ContainerInspect(ctx, tk.containerID)
	return err == nil && info.State != nil && info.State.Running
}

// stop asks the daemon to stop the container: its stop signal now,
// SIGKILL once grace has passed.
func (tk *task) stop(eng engine, grace time.Duration, log *slog.Logger) {
	tk.stopping.Store(true)
	secs := int(math.Ceil(grace.Seconds()))
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), grace+opTimeout)
		defer cancel()
		if err := eng.ContainerStop(ctx, tk.containerID, container.StopOptions{Timeout: &secs}); err != nil && !isGone(err) {
			log.Warn("stopping the container failed; removing it", "container", tk.containerID, "error", err)
			tk.remove(eng)
		}
	}()
}

// remove force-removes the container (killing it if it runs).
func (tk *task) remove(eng engine) {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	_ = eng.ContainerRemove(ctx, tk.containerID, container.RemoveOptions{Force: true, RemoveVolumes: true})
}

// isGone reports whether err says the container is not there (any more).
func isGone(err error) bool {
	return cerrdefs.IsNotFound(err)
}
