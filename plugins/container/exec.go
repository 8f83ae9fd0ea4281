package container

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/gpulayer/gpulayer/sdk/executor"
)

var _ executor.Execer = (*Executor)(nil)

// Exec runs a command in a running task's container with docker exec, as
// the container's user (the task's uid and gid), never privileged: the
// container's own namespaces, cgroup, capabilities and no-new-privileges
// hold for it as for the task.
func (e *Executor) Exec(ctx context.Context, req executor.ExecRequest, streams executor.ExecStreams) (int, error) {
	tk, err := e.tasks.Get(req.ID)
	if err != nil {
		return -1, err
	}
	eng, err := e.engine()
	if err != nil {
		return -1, err
	}
	opts := container.ExecOptions{User: tk.user, Tty: req.TTY, AttachStdin: true, AttachStdout: true, AttachStderr: true, Cmd: req.Command}
	if req.TTY && req.Size.Rows > 0 && req.Size.Cols > 0 {
		opts.ConsoleSize = &[2]uint{uint(req.Size.Rows), uint(req.Size.Cols)}
	}
	created, err := eng.ContainerExecCreate(ctx, tk.containerID, opts)
	if err != nil {
		return -1, fmt.Errorf("container: exec create: %w", err)
	}
	att, err := eng.ContainerExecAttach(ctx, created.ID, container.ExecAttachOptions{Tty: req.TTY, ConsoleSize: opts.ConsoleSize})
	if err != nil {
		return -1, fmt.Errorf("container: exec attach: %w", err)
	}
	defer att.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		if streams.Stdin != nil {
			_, _ = io.Copy(att.Conn, streams.Stdin)
		}
		_ = att.CloseWrite()
	}()
	if req.TTY {
		if opts.ConsoleSize != nil {
			// A daemon older than API 1.42 ignores ConsoleSize: the size
			// is set once the exec runs, as the docker CLI does.
			_ = eng.ContainerExecResize(ctx, created.ID, container.ResizeOptions{Height: opts.ConsoleSize[0], Width: opts.ConsoleSize[1]})
		}
		go resizeExec(ctx, eng, created.ID, streams.Resize)
	}
	out := make(chan error, 1)
	go func() {
		var err error
		if req.TTY {
			_, err = io.Copy(streams.Stdout, att.Reader)
		} else {
			_, err = stdcopy.StdCopy(streams.Stdout, streams.Stderr, att.Reader)
		}
		out <- err
	}()
	select {
	case err := <-out:
		if err != nil && !errors.Is(err, io.EOF) {
			return -1, fmt.Errorf("container: exec output: %w", err)
		}
	case <-ctx.Done():
		killExec(eng, created.ID)
		return -1, ctx.Err()
	}
	return execExitCode(ctx, eng, created.ID)
}

// execExitCode waits, briefly, for the daemon to record the exec's end
// (its output closes a moment before) and returns its exit code.
func execExitCode(ctx context.Context, eng engine, id string) (int, error) {
	for range 100 {
		ins, err := eng.ContainerExecInspect(ctx, id)
		if err != nil {
			return -1, fmt.Errorf("container: exec inspect: %w", err)
		}
		if !ins.Running {
			return ins.ExitCode, nil
		}
		select {
		case <-ctx.Done():
			return -1, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return -1, errors.New("container: the exec's output ended but the daemon still says it runs")
}

// resizeExec passes terminal sizes on to the exec's TTY.
func resizeExec(ctx context.Context, eng engine, id string, sizes <-chan executor.TermSize) {
	for {
		select {
		case <-ctx.Done():
			return
		case sz, ok := <-sizes:
			if !ok {
				return
			}
			if sz.Rows > 0 && sz.Cols > 0 {
				_ = eng.ContainerExecResize(ctx, id, container.ResizeOptions{Height: uint(sz.Rows), Width: uint(sz.Cols)})
			}
		}
	}
}
