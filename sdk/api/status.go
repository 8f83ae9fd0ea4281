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
