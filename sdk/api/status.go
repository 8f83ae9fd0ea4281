package api

// HealthResponse answers GET /v1/status/health.
type HealthResponse struct {
	Status   string `json:"status"`
	NodeID   string `json:"node_id"`
	Leader   string `json:"leader"`
	IsLeader bool   `json:"is_leader"`
	// Ready is true when the node knows a leader that has caught up.
	Ready bool `json:"ready"`
}

// LeaderResponse answers GET /v1/status/leader.
type LeaderResponse struct {
	Leader     string `json:"leader"`
	LeaderID   string `json:"leader_id"`
	LeaderRaft string `json:"leader_raft"`
}

// Peer is one Raft server as GET /v1/status/peers lists it.
type Peer struct {
	ID       string `json:"id"`
	Address  string `json:"address"`
	Suffrage string `json:"suffrage"`
	Leader   bool   `json:"leader"`
}

// PeersResponse answers GET /v1/status/peers.
type PeersResponse struct {
	Peers []Peer `json:"peers"`
}

// SelfResponse answers GET /v1/status/self: who this coordinator is, for
// cluster formation and operators.
type SelfResponse struct {
	NodeID   string `json:"node_id"`
	RaftAddr string `json:"raft_addr"`
	HTTPAddr string `json:"http_addr"`
	LeaderID string `json:"leader_id"`
	HasState bool   `json:"has_state"`
}

// NodeAddrRequest is the body of PUT /v1/operator/nodes/{id}: a
// coordinator telling the leader the HTTP address other coordinators
// reach it at (to relay artifact reads and store artifact copies).
type NodeAddrRequest struct {
	HTTPAddr string `json:"http_addr"`
}

// MaxNodeAddrBytes bounds NodeAddrRequest.HTTPAddr.
const MaxNodeAddrBytes = 256

// RaftPeerRequest is the body of POST /v1/operator/raft/peers.
type RaftPeerRequest struct {
	NodeID   string `json:"node_id"`
	RaftAddr string `json:"raft_addr"`
}

// GCRequest is the body of POST /v1/operator/gc: collect the finished
// jobs due now. OlderThanSeconds, when set, replaces the coordinator's
// retention threshold for this collection (0: every finished job, within
// the count kept).
type GCRequest struct {
	OlderThanSeconds *int64 `json:"older_than_seconds,omitempty"`
}

// GCResponse answers POST /v1/operator/gc.
type GCResponse struct {
	Removed int `json:"removed"`
}

// RestoreResponse answers PUT /v1/operator/snapshot once the uploaded
// snapshot replaced the state: how many bytes it held.
type RestoreResponse struct {
	Bytes    int64 `json:"bytes"`
	Restored bool  `json:"restored"`
}

// DigestResponse answers GET /v1/operator/local/digest: what this node has
// applied, for checking that every server holds the same state.
type DigestResponse struct {
	NodeID       string `json:"node_id"`
	AppliedIndex uint64 `json:"applied_index"`
	Digest       string `json:"digest"`
	Jobs         int    `json:"jobs"`
	Tasks        int    `json:"tasks"`
}
