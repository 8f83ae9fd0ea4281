package api

// Fleet control: drain, stop, resume and deregister (PROTOCOL.md's
// additions for the second wave; the shapes are in docs/protocol.md).

// DrainRequest is the body of POST /v1/workers/{id}/drain, of the
// worker's own POST /v1/workers/self/drain and of POST
// /v1/workers/self/deregister. DeadlineSeconds absent means
// DefaultDrainDeadlineSeconds; 0 means the worker's tasks are stopped now.
type DrainRequest struct {
	DeadlineSeconds *int `json:"deadline_seconds,omitempty"`
}

// Drain deadlines. Nomad's default drain deadline, one hour, is the
// anchor.
const (
	DefaultDrainDeadlineSeconds = 3600
	MaxDrainDeadlineSeconds     = 7 * 24 * 3600
)

// DrainedBySelf is the DrainedBy of a worker whose own agent drained it
// (at SIGTERM); only such a drain may the worker lift itself.
const DrainedBySelf = "self"
