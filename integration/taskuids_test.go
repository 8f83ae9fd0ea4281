package integration

import "sync/atomic"

// Task uid ranges: each agent a test starts gets a range of its own, from
// 64000 up, so that agents running at once (here, or in another test
// package: the agents of cmd/gpulayer's tests use 63000 …, those of
// integration/agentfaults 62000 …) never claim the same uids.
const (
	firstTaskUIDBase = 64000
	taskUIDStride    = 64
)

var taskUIDRanges atomic.Uint32

func nextTaskUIDBase() uint32 {
	return firstTaskUIDBase + taskUIDStride*(taskUIDRanges.Add(1)-1)
}
