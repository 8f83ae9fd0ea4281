package command

import (
	"encoding/json"
	"time"
)

// Type is the one-byte tag that starts every encoded command.
type Type byte

// Command types. Append only; never renumber.
const (
	TypeInvalid Type = iota
	TypeBatch
	TypeImportBootstrap
	TypeRegisterWorker
	TypeUpdateWorker
	TypeSetWorkerStatus
	TypeSubmitJob
	TypeAssignTask
	TypeStartTask
	TypeAppendLogs
	TypeFinishTask
	TypeFailTask
	TypeLoseAttempt
	TypeCancelJob
	TypeRegisterNode
	TypeReissueWorker
	TypeRevokeWorker
	TypeCreateGroup
	TypeAddGroupMember
	TypeRemoveGroupMember
	TypeDeleteGroup
	TypeCreateToken
	TypeRevokeToken
	TypeApproveWorker
	TypePutCluster
	TypeCreateEnrollment
	TypeRevokeEnrollment
	TypeEnrollWorker
	TypeAppendAudit
	TypeRecordArtifact
	TypeCollectGarbage
	TypeControlWorker
	TypeExpireDrains
	TypeClearGPU
	TypeAssignGang
	TypeJoinRendezvous
	TypeApproveDevices
	TypeSetArtifactHolder
	TypeForgetWorker
	TypeCordonDevice
	TypeCreateTeam
	TypeUpdateTeam
	TypeDeleteTeam
	TypePreemptTasks
	TypeSetMIGLayout
)

// Command is implemented by every command body.
type Command interface {
	Type() Type
}

// CredentialRecord is a credential as the replicated state stores it: never
// the secret, only its SHA-256.
type CredentialRecord struct {
	ID        string    `json:"id"`
	Kind      string    `json:"kind"`
	Name      string    `json:"name"`
	Roles     []string  `json:"roles,omitempty"`
	Hash      string    `json:"hash"`
	CreatedAt time.Time `json:"created_at"`
	ExpiresAt time.Time `json:"expires_at,omitzero"`
	WorkerID  string    `json:"worker_id,omitempty"`
	// CreatedBy names the client token that created it (empty for init's).
	CreatedBy string `json:"created_by,omitempty"`
	// MaxUses bounds the registrations a join token allows (0: no bound);
	// an instance token has 1.
	MaxUses int `json:"max_uses,omitempty"`
	// RequiresApproval registers a join token's workers as pending.
	RequiresApproval bool `json:"requires_approval,omitempty"`
	// Groups and Labels are given to the workers a join token registers.
	Groups []string          `json:"groups,omitempty"`
	Labels map[string]string `json:"labels,omitempty"`
	// GPUModels pins the GPU models a join token's workers may have.
	GPUModels []string `json:"gpu_models,omitempty"`
	// InstanceID binds an instance token to one provisioned instance.
	InstanceID string `json:"instance_id,omitempty"`
	// Team is the team a client token acts within (empty: DefaultTeam,
	// as every token created before teams).
	Team string `json:"team,omitempty"`
}

// ImportBootstrap installs the credentials written by `coordinator init`.
// A higher Generation than the state holds replaces every client and join
// credential (rotation); an equal or lower one is ignored.
type ImportBootstrap struct {
	Generation  int                `json:"generation"`
	Credentials []CredentialRecord `json:"credentials"`
	Now         time.Time          `json:"now"`
}

// RegisterWorker creates a worker and its credential. If the worker id
// exists, nothing changes and the result reports the existing record.
//
// TokenID names the join or instance token the registration redeems: the
// state machine checks, in the same step as the write, that the token is
// still usable (not revoked, expired or used up; an instance token bound
// to InstanceID) and counts the use. Without TokenID nothing is redeemed
// (logs written before tokens had limits, and tools that build state).
type RegisterWorker struct {
	WorkerID     string            `json:"worker_id"`
	Credential   CredentialRecord  `json:"credential"`
	RegisteredBy string            `json:"registered_by"`
	Labels       map[string]string `json:"labels,omitempty"`
	Capabilities []string          `json:"capabilities"`
	Executors    []string          `json:"executors"`
	Devices      []Device          `json:"devices"`
	Now          time.Time         `json:"now"`
	TokenID      string            `json:"token_id,omitempty"`
	Origin       string            `json:"origin,omitempty"`
	InstanceID   string            `json:"instance_id,omitempty"`
	Source       string            `json:"source,omitempty"`
}

// UpdateWorker records a change in a worker's advertised inventory.
type UpdateWorker struct {
	WorkerID  string    `json:"worker_id"`
	Executors []string  `json:"executors"`
	Devices   []Device  `json:"devices"`
	Now       time.Time `json:"now"`
	// AuditDevices has the state machine audit each GPU that appears,
	// goes, or changes health (entries written before it did not).
	AuditDevices bool `json:"audit_devices,omitempty"`
	// MaxTasks, when positive, is how many tasks the agent runs at once.
	MaxTasks int `json:"max_tasks,omitempty"`
}

// SetWorkerStatus moves a worker between ready and offline.
type SetWorkerStatus struct {
	WorkerID string    `json:"worker_id"`
	Status   string    `json:"status"`
	Now      time.Time `json:"now"`
}

// SubmitJob creates a job and its tasks. MaxPendingJobs, when positive,
// is the quota of CreatedBy's jobs that have not ended, checked inside
// Apply (0: none, as in entries written before quotas).
type SubmitJob struct {
	JobID          string    `json:"job_id"`
	TaskIDs        []string  `json:"task_ids"`
	Spec           JobSpec   `json:"spec"`
	CreatedBy      string    `json:"created_by"`
	Now            time.Time `json:"now"`
	MaxPendingJobs int       `json:"max_pending_jobs,omitempty"`
	// SpecHash is the spec's digest, taken by the leader from the one
	// encoding of the spec (EncodeSubmit), so that no replica hashes it
	// inside Apply; empty in entries written before it was carried, whose
	// replicas take the legacy digest themselves (LegacySpecDigest).
	SpecHash string `json:"spec_hash,omitempty"`
	// Team is the team the job runs for: its submitting token's (empty
	// in entries written before teams, read as DefaultTeam).
	Team string `json:"team,omitempty"`
}

// AssignTask hands a pending task to a worker under a new attempt.
type AssignTask struct {
	TaskID       string    `json:"task_id"`
	WorkerID     string    `json:"worker_id"`
	AttemptID    string    `json:"attempt_id"`
	Devices      []string  `json:"devices"`
	LeaseSeconds int       `json:"lease_seconds"`
	Now          time.Time `json:"now"`
	// RequestID is the acquire's request id: an assignment under the id
	// the worker's last one was made under, while that attempt is still
	// the worker's, yields that assignment again and assigns nothing.
	RequestID string `json:"request_id,omitempty"`
	// More marks a second or later task of one acquire for several under
	// RequestID: it is assigned, and remembered with the first.
	More bool `json:"more,omitempty"`
	// Metered has the attempt's GPU time counted when it ends (usage):
	// set by every leader that meters, absent in entries written before,
	// so a replica replaying those counts nothing either way.
	Metered bool `json:"metered,omitempty"`
}

// StartTask marks the current attempt running.
type StartTask struct {
	TaskID    string    `json:"task_id"`
	WorkerID  string    `json:"worker_id"`
	AttemptID string    `json:"attempt_id"`
	Now       time.Time `json:"now"`
	// Preflight is how the attempt's preflight went (preflight.go).
	Preflight *Preflight `json:"preflight,omitempty"`
}

// AppendLogs adds a chunk of output to the current attempt.
type AppendLogs struct {
	TaskID    string    `json:"task_id"`
	WorkerID  string    `json:"worker_id"`
	AttemptID string    `json:"attempt_id"`
	Stream    string    `json:"stream"`
	Seq       int64     `json:"seq"`
	Data      string    `json:"data"`
	Now       time.Time `json:"now"`
	// MaxOutputBytes is the total output the coordinators keep (0: no
	// bound), carried in the command so every replica applies the same
	// bound whatever its own flags say.
	MaxOutputBytes int `json:"max_output_bytes,omitempty"`
}

// FinishTask ends the current attempt with an exit code. SubmissionID and
// BodyHash make it idempotent.
type FinishTask struct {
	TaskID       string          `json:"task_id"`
	WorkerID     string          `json:"worker_id"`
	AttemptID    string          `json:"attempt_id"`
	SubmissionID string          `json:"submission_id,omitempty"`
	BodyHash     string          `json:"body_hash,omitempty"`
	ExitCode     int             `json:"exit_code"`
	Output       json.RawMessage `json:"output,omitempty"`
	// Artifacts are the task's uploaded outputs (an entry written before
	// outputs had paths carries bare digests, read as TaskArtifact).
	Artifacts []TaskArtifact `json:"artifacts,omitempty"`
	// RequireRecorded refuses a finish listing an artifact that has no
	// record (absent in entries written before: those apply unchecked).
	RequireRecorded bool      `json:"require_recorded,omitempty"`
	Now             time.Time `json:"now"`
	Reason          string    `json:"reason,omitempty"`
	// Checkpoint is the checkpoint the attempt's end uploaded, for a
	// job with a checkpoint path (state/checkpoint.go).
	Checkpoint *Checkpoint `json:"checkpoint,omitempty"`
	// RequireProof refuses an artifact or checkpoint that neither the
	// job's team may read already nor this worker uploaded the bytes of
	// (absent in entries written before: those apply as they did).
	RequireProof bool `json:"require_proof,omitempty"`
}

// FailTask ends the current attempt as failed for a reason outside the task
// (the executor could not run it); it is retried while attempts remain.
type FailTask struct {
	TaskID    string `json:"task_id"`
	WorkerID  string `json:"worker_id"`
	AttemptID string `json:"attempt_id"`
	Reason    string `json:"reason"`
	Permanent bool   `json:"permanent,omitempty"`
	// GPUFault is the GPU (one the attempt holds) whose fault ended it
	// (state/gpufault.go).
	GPUFault string    `json:"gpu_fault,omitempty"`
	Now      time.Time `json:"now"`
	// Checkpoint and RequireProof are as FinishTask's.
	Checkpoint   *Checkpoint `json:"checkpoint,omitempty"`
	RequireProof bool        `json:"require_proof,omitempty"`
	// Preflight is how the attempt's preflight went (preflight.go).
	Preflight *Preflight `json:"preflight,omitempty"`
}

// LoseAttempt ends an attempt whose lease lapsed or whose worker was lost.
type LoseAttempt struct {
	TaskID    string    `json:"task_id"`
	AttemptID string    `json:"attempt_id"`
	Reason    string    `json:"reason"`
	Now       time.Time `json:"now"`
}

// CancelJob cancels a job's pending tasks and asks running ones to stop.
type CancelJob struct {
	JobID  string    `json:"job_id"`
	By     string    `json:"by"`
	Now    time.Time `json:"now"`
	Source string    `json:"source,omitempty"`
}

// RegisterNode records a coordinator's HTTP address, keyed by its Raft id,
// so that any node can name the leader's HTTP address.
type RegisterNode struct {
	NodeID   string `json:"node_id"`
	HTTPAddr string `json:"http_addr"`
}

// Batch carries several commands in one log entry (group commit).
type Batch struct {
	Entries [][]byte `json:"entries"`
}

func (Batch) Type() Type           { return TypeBatch }
func (ImportBootstrap) Type() Type { return TypeImportBootstrap }
func (RegisterWorker) Type() Type  { return TypeRegisterWorker }
func (UpdateWorker) Type() Type    { return TypeUpdateWorker }
func (SetWorkerStatus) Type() Type { return TypeSetWorkerStatus }
func (SubmitJob) Type() Type       { return TypeSubmitJob }
func (AssignTask) Type() Type      { return TypeAssignTask }
func (StartTask) Type() Type       { return TypeStartTask }
func (AppendLogs) Type() Type      { return TypeAppendLogs }
func (FinishTask) Type() Type      { return TypeFinishTask }
func (FailTask) Type() Type        { return TypeFailTask }
func (LoseAttempt) Type() Type     { return TypeLoseAttempt }
func (CancelJob) Type() Type       { return TypeCancelJob }
func (RegisterNode) Type() Type    { return TypeRegisterNode }

// CollectGarbage removes finished jobs (every task terminal), oldest
// first, with their tasks, attempts, output, finish records and
// idempotency keys: those that ended at or before Now minus OlderThan,
// and, past that, the oldest beyond the KeepFinished newest finished jobs
// (0: no bound by count). It removes at most Limit jobs (0: no limit), so
// that one log entry stays small; the leader proposes it again while more
// remain. It is decided on the log's own data alone, so every replica
// removes the same jobs.
type CollectGarbage struct {
	Now          time.Time     `json:"now"`
	OlderThan    time.Duration `json:"older_than"`
	KeepFinished int           `json:"keep_finished,omitempty"`
	Limit        int           `json:"limit,omitempty"`
	By           string        `json:"by"`
	Source       string        `json:"source,omitempty"`
	// Artifacts also removes the artifact records that no job left names
	// (as an input or a task's output) and that were uploaded at or
	// before Now minus OlderThan (absent in entries written before
	// artifacts were collected: those keep every artifact).
	Artifacts bool `json:"artifacts,omitempty"`
}

func (CollectGarbage) Type() Type { return TypeCollectGarbage }
