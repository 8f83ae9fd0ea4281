package command

import "time"

// AuditEvent is one entry of the audit log. Seq is assigned by the state
// machine when the event is appended. It never holds a secret.
type AuditEvent struct {
	Seq            uint64    `json:"seq,omitempty"`
	Time           time.Time `json:"time"`
	Kind           string    `json:"kind"`
	Actor          string    `json:"actor,omitempty"`
	CredentialID   string    `json:"credential_id,omitempty"`
	CredentialKind string    `json:"credential_kind,omitempty"`
	WorkerID       string    `json:"worker_id,omitempty"`
	Subject        string    `json:"subject,omitempty"`
	// Team is the team the event concerns (a job's, a client token's, a
	// team's own), where it concerns one.
	Team   string `json:"team,omitempty"`
	Source string `json:"source,omitempty"`
	Route  string `json:"route,omitempty"`
	Code   string `json:"code,omitempty"`
	Detail string `json:"detail,omitempty"`
	Count  int    `json:"count,omitempty"`
}

// AppendAudit appends events that no other command carries: refused
// authentications and enrollments, coalesced by the node that saw them.
type AppendAudit struct {
	Events []AuditEvent `json:"events"`
}

// RecordArtifact records that coordinators hold the blob of a digest in
// their data dirs: NodeID, and every node in Holders (an entry written
// before copies were made carries NodeID alone). The bytes never travel
// through Raft.
type RecordArtifact struct {
	Digest  string   `json:"digest"`
	Size    int64    `json:"size"`
	NodeID  string   `json:"node_id"`
	Holders []string `json:"holders,omitempty"`
	// Touch marks the record as put again now (TouchedAt), so that
	// garbage collection keeps a digest that was just uploaded again
	// until a job names it (absent in entries written before).
	Touch bool `json:"touch,omitempty"`
	// Team is the uploading client token's team, which may read the
	// artifact from then on (empty for a worker's upload: a task's
	// outputs reach its job's team when its finish lists them).
	Team string `json:"team,omitempty"`
	// ChargeTeam is the team whose artifact quota a new record counts
	// in: the uploading client's, or the team of the uploading worker's
	// tasks (a finish or a checkpoint that names the artifact charges
	// its job's team instead). Empty in entries written before.
	ChargeTeam string `json:"charge_team,omitempty"`
	// Scoped marks a record made by a coordinator that knows teams: its
	// readers are its Teams (absent in entries written before, whose
	// records stay default's).
	Scoped bool `json:"scoped,omitempty"`
	// WorkerID is the uploading worker's, set only where the upload
	// proved the bytes (stored or hashed here): that worker's finishes
	// may then name the artifact (state/artifacts.go, checkProof).
	WorkerID string    `json:"worker_id,omitempty"`
	By       string    `json:"by"`
	Source   string    `json:"source,omitempty"`
	Now      time.Time `json:"now"`
}

// SetArtifactHolder adds one coordinator to the holders of a recorded
// artifact (Held: it verified on its disk a copy of the bytes, Size of
// them) or drops it from them (its copy is missing or damaged). It never
// creates a record: a digest collected meanwhile stays collected. Reason
// says why, for the audit log ("copied", "missing", "damaged").
type SetArtifactHolder struct {
	Digest string    `json:"digest"`
	NodeID string    `json:"node_id"`
	Held   bool      `json:"held,omitempty"`
	Size   int64     `json:"size,omitempty"`
	Reason string    `json:"reason,omitempty"`
	By     string    `json:"by"`
	Now    time.Time `json:"now"`
}

func (AppendAudit) Type() Type       { return TypeAppendAudit }
func (RecordArtifact) Type() Type    { return TypeRecordArtifact }
func (SetArtifactHolder) Type() Type { return TypeSetArtifactHolder }

// TimeLayout is the protocol's timestamp layout (sdk/api.TimeFormat, tied
// by a test), for the times an audit event's detail names.
const TimeLayout = "2006-01-02T15:04:05.000Z07:00"
