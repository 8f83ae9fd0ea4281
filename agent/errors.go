package agent

import "errors"

// Sentinel errors.
var (
	// ErrCredentialRejected means the persisted worker credential no longer
	// works and the agent cannot repair it by itself.
	ErrCredentialRejected = errors.New("persisted worker credential was rejected")
	// ErrRevoked means the coordinator revoked this worker.
	ErrRevoked = errors.New("worker revoked by the coordinator")
	// ErrNoJoinToken means there is neither a credential nor a means to
	// obtain one (join token, instance token or enrollment).
	ErrNoJoinToken = errors.New("no persisted worker credential, and no join token, instance token or enrollment to register with")
	// ErrTaskUIDsTaken means another agent on this host runs tasks under
	// a uid of this agent's per-slot range.
	ErrTaskUIDsTaken = errors.New("agent: the task uid range overlaps another agent's")
	// ErrTaskUIDsInUse means a uid (or gid) of the per-slot range is a
	// user (or group) of this host.
	ErrTaskUIDsInUse = errors.New("agent: the task uid range holds a user or group of this host")
	// ErrMetricsAddr means the metrics address is not HOST:PORT, or not
	// a loopback address while remote scrapes are not allowed.
	ErrMetricsAddr = errors.New("agent: metrics address refused")
	// ErrMPSNeedsOneTaskUser means an MPS pipe directory was given to an
	// agent that runs each task under a uid of its own: MPS serves one
	// uid at a time, so shares of different tasks would queue behind each
	// other instead of running side by side.
	ErrMPSNeedsOneTaskUser = errors.New("agent: MPS sharing needs every task to run as one user")
)
