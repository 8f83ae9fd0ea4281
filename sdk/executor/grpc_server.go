package executor

import (
	"context"
	"time"

	pb "github.com/gpulayer/gpulayer/sdk/executor/proto"
)

// grpcServer serves an Executor as the gRPC executor service.
type grpcServer struct {
	pb.UnimplementedExecutorServer
	impl Executor
}

// NewGRPCServer adapts impl to the gRPC executor service. Errors from impl
// are sent as gRPC status codes that NewGRPCClient maps back to the
// package's sentinels. Serve uses it; call it directly only to serve an
// executor without go-plugin.
func NewGRPCServer(impl Executor) pb.ExecutorServer {
	return &grpcServer{impl: impl}
}

func (s *grpcServer) Info(ctx context.Context, _ *pb.InfoRequest) (*pb.InfoResponse, error) {
	info, err := s.impl.Info(ctx)
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.InfoResponse{Name: info.Name, Version: info.Version}, nil
}

func (s *grpcServer) Start(ctx context.Context, req *pb.StartRequest) (*pb.StartResponse, error) {
	if err := s.impl.Start(ctx, taskFromProto(req.GetTask())); err != nil {
		return nil, toStatus(err)
	}
	return &pb.StartResponse{}, nil
}

func (s *grpcServer) Wait(ctx context.Context, req *pb.WaitRequest) (*pb.WaitResponse, error) {
	res, err := s.impl.Wait(ctx, req.GetId())
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.WaitResponse{ExitCode: int64(res.ExitCode), Output: res.Output, Reason: res.Reason}, nil
}

func (s *grpcServer) Stop(ctx context.Context, req *pb.StopRequest) (*pb.StopResponse, error) {
	if err := s.impl.Stop(ctx, req.GetId(), time.Duration(req.GetGraceNanos())); err != nil {
		return nil, toStatus(err)
	}
	return &pb.StopResponse{}, nil
}

func (s *grpcServer) Logs(req *pb.LogsRequest, stream pb.Executor_LogsServer) error {
	err := s.impl.Logs(stream.Context(), req.GetId(), func(c LogChunk) error {
		return stream.Send(&pb.LogChunk{Stream: c.Stream, Data: c.Data})
	})
	return toStatus(err)
}

func taskFromProto(t *pb.Task) Task {
	return Task{
		ID:      t.GetId(),
		TaskID:  t.GetTaskId(),
		JobID:   t.GetJobId(),
		Config:  t.GetConfig(),
		Env:     t.GetEnv(),
		Devices: t.GetDevices(),
		WorkDir: t.GetWorkDir(),
	}
}

func taskToProto(t Task) *pb.Task {
	return &pb.Task{
		Id:      t.ID,
		TaskId:  t.TaskID,
		JobId:   t.JobID,
		Config:  t.Config,
		Env:     t.Env,
		Devices: t.Devices,
		WorkDir: t.WorkDir,
	}
}
