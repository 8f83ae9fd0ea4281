package cluster

import "errors"

// Sentinel errors.
var (
	// ErrNotLeader is returned for a write proposed on a follower.
	ErrNotLeader = errors.New("not the leader")
	// ErrNoLeader is returned when the cluster has no leader now.
	ErrNoLeader = errors.New("no leader")
	// ErrOutcomeUnknown marks a write that may or may not have been
	// applied: leadership was lost while it committed, or the wait for its
	// commit was cut short. It is wrapped with ErrNotLeader or the
	// context's error.
	ErrOutcomeUnknown = errors.New("outcome unknown")
	// ErrShutdown is returned after the node stopped.
	ErrShutdown = errors.New("raft node shut down")
)
