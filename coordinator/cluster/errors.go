package cluster

import "errors"

// Sentinel errors.
var (
	// ErrNotLeader is returned for a write proposed on a follower.
	ErrNotLeader = errors.New("not the leader")
	// ErrNoLeader is returned when the cluster has no leader now.
	ErrNoLeader = errors.New("no leader")
	// ErrShutdown is returned after the node stopped.
	ErrShutdown = errors.New("raft node shut down")
)
