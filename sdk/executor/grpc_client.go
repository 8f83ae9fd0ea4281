package executor

import (
	"context"
	"errors"
	"io"
	"time"

	"google.golang.org/grpc"

	pb "github.com/gpulayer/gpulayer/sdk/executor/proto"
)

// grpcClient implements Executor over a gRPC connection to a plugin.
type grpcClient struct {
	client pb.ExecutorClient
}

var _ Executor = (*grpcClient)(nil)

// NewGRPCClient returns an Executor that calls the executor service over
// conn. Errors the plugin returned for ErrUnknownTask, ErrDuplicateTask and
// ErrInvalidConfig (and context cancellation) match those sentinels with
// errors.Is; transport errors are returned as gRPC status errors.
func NewGRPCClient(conn grpc.ClientConnInterface) Executor {
	return &grpcClient{client: pb.NewExecutorClient(conn)}
}

func (c *grpcClient) Info(ctx context.Context) (Info, error) {
	resp, err := c.client.Info(ctx, &pb.InfoRequest{})
	if err != nil {
		return Info{}, fromStatus(err)
	}
	return Info{Name: resp.GetName(), Version: resp.GetVersion()}, nil
}

func (c *grpcClient) Start(ctx context.Context, task Task) error {
	_, err := c.client.Start(ctx, &pb.StartRequest{Task: taskToProto(task)})
	return fromStatus(err)
}

func (c *grpcClient) Wait(ctx context.Context, id string) (Result, error) {
	resp, err := c.client.Wait(ctx, &pb.WaitRequest{Id: id})
	if err != nil {
		return Result{}, fromStatus(err)
	}
	return Result{ExitCode: int(resp.GetExitCode()), Output: resp.GetOutput(), Reason: resp.GetReason()}, nil
}

func (c *grpcClient) Stop(ctx context.Context, id string, grace time.Duration) error {
	_, err := c.client.Stop(ctx, &pb.StopRequest{Id: id, GraceNanos: int64(grace)})
	return fromStatus(err)
}

// Logs forwards the stream to send. If send fails, the stream is cancelled
// and send's error is returned unchanged.
func (c *grpcClient) Logs(ctx context.Context, id string, send func(LogChunk) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := c.client.Logs(ctx, &pb.LogsRequest{Id: id})
	if err != nil {
		return fromStatus(err)
	}
	for {
		chunk, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fromStatus(err)
		}
		if err := send(LogChunk{Stream: chunk.GetStream(), Data: chunk.GetData()}); err != nil {
			return err
		}
	}
}
