package executor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/gpulayer/gpulayer/sdk/executor/proto"
)

// Exec carries an exec to the plugin: the start, then stdin and resizes
// from their own goroutine, while the outputs are written as they come.
// A plugin that does not implement it is ErrExecUnsupported.
func (c *grpcClient) Exec(ctx context.Context, req ExecRequest, streams ExecStreams) (int, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := c.client.Exec(ctx)
	if err != nil {
		return -1, execStatus(err)
	}
	start := &pb.ExecStart{Id: req.ID, Command: req.Command, Tty: req.TTY, Rows: uint32(req.Size.Rows), Cols: uint32(req.Size.Cols)}
	if err := stream.Send(&pb.ExecInput{Input: &pb.ExecInput_Start{Start: start}}); err != nil {
		return -1, execStatus(err)
	}
	go sendExecInput(ctx, stream, streams)
	for {
		out, err := stream.Recv()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return -1, errors.New("executor: exec stream ended without an exit code")
			}
			return -1, execStatus(err)
		}
		switch o := out.GetOutput().(type) {
		case *pb.ExecOutput_Stdout:
			if _, err := streams.Stdout.Write(o.Stdout); err != nil {
				return -1, err
			}
		case *pb.ExecOutput_Stderr:
			if _, err := streams.Stderr.Write(o.Stderr); err != nil {
				return -1, err
			}
		case *pb.ExecOutput_ExitCode:
			return int(o.ExitCode), nil
		}
	}
}

// sendExecInput sends stdin (then its end) and resizes until ctx ends.
func sendExecInput(ctx context.Context, stream pb.Executor_ExecClient, streams ExecStreams) {
	var mu sync.Mutex
	send := func(in *pb.ExecInput) error {
		mu.Lock()
		defer mu.Unlock()
		return stream.Send(in)
	}
	if streams.Resize != nil {
		go func() {
			for {
				select {
				case <-ctx.Done():
					return
				case sz := <-streams.Resize:
					if send(&pb.ExecInput{Input: &pb.ExecInput_Resize{Resize: &pb.TermSize{Rows: uint32(sz.Rows), Cols: uint32(sz.Cols)}}}) != nil {
						return
					}
				}
			}
		}()
	}
	if streams.Stdin == nil {
		_ = send(&pb.ExecInput{Input: &pb.ExecInput_StdinEof{StdinEof: true}})
		return
	}
	buf := make([]byte, 32<<10)
	for {
		n, err := streams.Stdin.Read(buf)
		if n > 0 {
			if send(&pb.ExecInput{Input: &pb.ExecInput_Stdin{Stdin: append([]byte(nil), buf[:n]...)}}) != nil {
				return
			}
		}
		if err != nil {
			_ = send(&pb.ExecInput{Input: &pb.ExecInput_StdinEof{StdinEof: true}})
			return
		}
	}
}

func execStatus(err error) error {
	if status.Code(err) == codes.Unimplemented {
		return ErrExecUnsupported
	}
	return fromStatus(err)
}

// Exec serves an exec: it reads the start, feeds stdin through a pipe and
// resizes through a channel, and sends the outputs and the exit code.
func (s *grpcServer) Exec(stream pb.Executor_ExecServer) error {
	ex, ok := s.impl.(Execer)
	if !ok {
		return status.Error(codes.Unimplemented, ErrExecUnsupported.Error())
	}
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	start := first.GetStart()
	if start == nil {
		return status.Error(codes.InvalidArgument, "the first exec input must be start")
	}
	ctx, cancel := context.WithCancel(stream.Context())
	defer cancel()
	stdinR, stdinW := io.Pipe()
	defer stdinR.Close()
	resize := make(chan TermSize, 4)
	go recvExecInput(ctx, stream, stdinW, resize)
	var mu sync.Mutex
	out := func(o *pb.ExecOutput) error {
		mu.Lock()
		defer mu.Unlock()
		return stream.Send(o)
	}
	req := ExecRequest{ID: start.GetId(), Command: start.GetCommand(), TTY: start.GetTty(), Size: TermSize{Rows: uint16(start.GetRows()), Cols: uint16(start.GetCols())}}
	code, err := ex.Exec(ctx, req, ExecStreams{
		Stdin:  stdinR,
		Stdout: sendWriter(func(b []byte) error { return out(&pb.ExecOutput{Output: &pb.ExecOutput_Stdout{Stdout: b}}) }),
		Stderr: sendWriter(func(b []byte) error { return out(&pb.ExecOutput{Output: &pb.ExecOutput_Stderr{Stderr: b}}) }),
		Resize: resize,
	})
	if err != nil {
		return toStatus(fmt.Errorf("exec: %w", err))
	}
	return out(&pb.ExecOutput{Output: &pb.ExecOutput_ExitCode{ExitCode: int64(code)}})
}

// recvExecInput passes stdin on to the pipe and resizes to the channel.
func recvExecInput(ctx context.Context, stream pb.Executor_ExecServer, stdin *io.PipeWriter, resize chan<- TermSize) {
	defer stdin.Close()
	for {
		in, err := stream.Recv()
		if err != nil {
			return
		}
		switch i := in.GetInput().(type) {
		case *pb.ExecInput_Stdin:
			if _, err := stdin.Write(i.Stdin); err != nil {
				return
			}
		case *pb.ExecInput_StdinEof:
			_ = stdin.Close()
		case *pb.ExecInput_Resize:
			select {
			case resize <- TermSize{Rows: uint16(i.Resize.GetRows()), Cols: uint16(i.Resize.GetCols())}:
			case <-ctx.Done():
				return
			}
		}
	}
}

// sendWriter is an io.Writer that sends each write as one message (a
// copy: the message outlives the caller's buffer).
type sendWriter func([]byte) error

func (f sendWriter) Write(b []byte) (int, error) {
	if err := f(append([]byte(nil), b...)); err != nil {
		return 0, err
	}
	return len(b), nil
}
