// Package proto holds the gRPC service that carries the executor contract
// between the GpuLayer agent and executor plugins. Plugin authors do not use
// it directly: sdk/executor adapts it to the Executor interface.
package proto

//go:generate protoc --go_out=. --go_opt=paths=source_relative --go-grpc_out=. --go-grpc_opt=paths=source_relative executor.proto
