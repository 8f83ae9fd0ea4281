package command

import "time"

// AssignGang assigns every task of a gang job at once, each member to
// its worker under a new attempt, or none of them: the state machine
// checks the whole placement before it changes anything.
//
// WorkerID is the worker whose acquire made the placement; its members
// are its answer (remembered under RequestID for a retry, as
// AssignTask's) and their lease is at most LeaseSeconds. The other
// members are delivered to their workers by those workers' next acquire.
type AssignGang struct {
	JobID        string       `json:"job_id"`
	WorkerID     string       `json:"worker_id"`
	Members      []GangMember `json:"members"`
	LeaseSeconds int          `json:"lease_seconds,omitempty"`
	RequestID    string       `json:"request_id,omitempty"`
	Now          time.Time    `json:"now"`
	// Metered: as AssignTask's.
	Metered bool `json:"metered,omitempty"`
}

// GangMember is one task of an AssignGang.
type GangMember struct {
	TaskID    string   `json:"task_id"`
	WorkerID  string   `json:"worker_id"`
	AttemptID string   `json:"attempt_id"`
	Devices   []string `json:"devices,omitempty"`
}

// JoinRendezvous records where a gang member's current attempt can be
// reached, for its peers.
type JoinRendezvous struct {
	TaskID    string    `json:"task_id"`
	WorkerID  string    `json:"worker_id"`
	AttemptID string    `json:"attempt_id"`
	Address   string    `json:"address"`
	Port      int       `json:"port,omitempty"`
	Now       time.Time `json:"now"`
}

func (AssignGang) Type() Type     { return TypeAssignGang }
func (JoinRendezvous) Type() Type { return TypeJoinRendezvous }
