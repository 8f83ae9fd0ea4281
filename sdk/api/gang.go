package api

// GangMember places an assigned task in its gang: Size tasks in all,
// this one of rank Rank (its index in the job; rank 0 is the master).
type GangMember struct {
	Size int `json:"size"`
	Rank int `json:"rank"`
}

// RendezvousRequest is the body of POST /v1/tasks/{id}/rendezvous: the
// attempt, and where its peers reach it. Address is a host name or IP
// the agent advertises; Port is the port rank 0 leased for the master
// (0 for the other ranks, which listen on nothing).
type RendezvousRequest struct {
	AttemptID string `json:"attempt_id"`
	Address   string `json:"address"`
	Port      int    `json:"port,omitempty"`
	// WaitSeconds bounds this call's wait (1 to
	// MaxRendezvousWaitSeconds; 0: the most).
	WaitSeconds int `json:"wait_seconds,omitempty"`
}

// RendezvousResponse answers rendezvous: Ready once every member of the
// gang's current attempts has called, with every member, by rank;
// Ready false when the wait (at most MaxRendezvousWaitSeconds) ended
// first: call again.
type RendezvousResponse struct {
	Ready bool       `json:"ready"`
	Peers []GangPeer `json:"peers,omitempty"`
}

// GangPeer is one member of a gang as rendezvous lists it.
type GangPeer struct {
	Rank     int    `json:"rank"`
	TaskID   string `json:"task_id"`
	WorkerID string `json:"worker_id"`
	Address  string `json:"address"`
	Port     int    `json:"port,omitempty"`
}

// MaxRendezvousWaitSeconds bounds one rendezvous long poll.
const MaxRendezvousWaitSeconds = 30

// MaxGangSize bounds a gang's task count.
const MaxGangSize = 256
