package state

import (
	"encoding/json"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
)

// Worker is a registered worker.
type Worker struct {
	ID           string            `json:"id"`
	Status       string            `json:"status"`
	Labels       map[string]string `json:"labels,omitempty"`
	Capabilities []string          `json:"capabilities"`
	Executors    []string          `json:"executors"`
	Devices      []command.Device  `json:"devices"`
	CredentialID string            `json:"credential_id"`
	RegisteredAt time.Time         `json:"registered_at"`
	RegisteredBy string            `json:"registered_by,omitempty"`

	Origin            string    `json:"origin,omitempty"`
	InstanceID        string    `json:"instance_id,omitempty"`
	ClusterKey        string    `json:"cluster_key,omitempty"`
	ExternalWorkerKey string    `json:"external_worker_key,omitempty"`
	TokenID           string    `json:"token_id,omitempty"`
	ApprovedBy        string    `json:"approved_by,omitempty"`
	ApprovedAt        time.Time `json:"approved_at,omitzero"`
	// LastAcquire is the assignment the worker's last acquire with a
	// request id was answered with (acquire.go).
	LastAcquire *LastAcquire `json:"last_acquire,omitempty"`
	// A draining or stopping worker (fleet.go): who asked (drainedBySelf
	// when its own agent did), when its remaining tasks are stopped (zero
	// once they have been told to, or for a stop), and whether it is
	// forgotten once it holds no task.
	DrainedBy     string    `json:"drained_by,omitempty"`
	DrainDeadline time.Time `json:"drain_deadline,omitzero"`
	Deregister    bool      `json:"deregister,omitempty"`
	// ClearGPUs are GPUs an admin asked the agent to clear (gpuclear.go).
	ClearGPUs []string `json:"clear_gpus,omitempty"`
	// ApprovedDevices is the inventory the worker's GPUs are offered as
	// (gpuapproval.go): UUID to memory in MiB; nil in state written
	// before it was kept. Empty is not nil: a worker approved with no
	// GPUs has every GPU it reports later awaiting approval, so a
	// snapshot writes the field always (nil as nil), never omitting it.
	ApprovedDevices map[string]uint64 `json:"approved_devices"`
	// Cordons maps each GPU an admin cordoned (its UUID; a MIG device's
	// GPU cordons it too) to the reason given: such a GPU is not offered
	// (state/cordon.go). Kept apart from Devices, which each report of
	// the agent replaces.
	Cordons map[string]string `json:"cordons,omitempty"`
	// MIGLayouts are the MIG layouts asked of its GPUs, one per GPU,
	// sorted by UUID (miglayout.go).
	MIGLayouts []MIGLayout `json:"mig_layouts,omitempty"`
	// ApprovedIdentity binds, by UUID, the rest of what placement trusts
	// of each approved GPU (gpubind.go: identityOf); nil in state
	// written before it was kept. Written always, as ApprovedDevices.
	ApprovedIdentity map[string]string `json:"approved_identity"`
	// MaxTasks is how many tasks the worker's agent runs at once, as its
	// heartbeats say (0: not said); a gang placement keeps within it.
	MaxTasks int `json:"max_tasks,omitempty"`
	// Holds are devices a preemption freed for the task it was made for
	// (preempt_holds.go): no other task is given them while the hold
	// lasts. Replaced, never edited.
	Holds []DeviceHold `json:"holds,omitempty"`

	// active holds the ids of tasks assigned to or running on the worker.
	active map[string]struct{}
	// topo is its topology labels, numbered (gangtopology_index.go).
	topo workerTopology
}

// Attempt is one assignment of a task.
type Attempt struct {
	ID         string    `json:"id"`
	Number     int       `json:"number"`
	WorkerID   string    `json:"worker_id"`
	State      string    `json:"state"`
	Devices    []string  `json:"devices,omitempty"`
	AssignedAt time.Time `json:"assigned_at"`
	StartedAt  time.Time `json:"started_at,omitzero"`
	EndedAt    time.Time `json:"ended_at,omitzero"`
	ExitCode   *int      `json:"exit_code,omitempty"`
	Reason     string    `json:"reason,omitempty"`
	// Rendezvous is where a gang member's attempt said its peers reach
	// it (gang.go); nil until it called rendezvous.
	Rendezvous *Endpoint `json:"rendezvous,omitempty"`
	// GPUFault names the GPU whose fault ended the attempt (lost), as its
	// agent reported it (gpufault.go).
	GPUFault string `json:"gpu_fault,omitempty"`
	// Meter is what the attempt holds, per GPU model, in hundredths of a
	// GPU, where the leader that placed it meters (usage.go); nil in
	// attempts placed before.
	Meter []MeterShare `json:"meter,omitempty"`
	// PreemptedBy names the task a preemption asked this attempt to stop
	// for, and when (preempt.go); nil where none did.
	PreemptedBy *Preemptor `json:"preempted_by,omitempty"`
	// Preflight is how the attempt's preflight went, as its agent
	// reported it with the start or the fail (preflight.go).
	Preflight *command.Preflight `json:"preflight,omitempty"`
}

// Preemptor is the task a preemption was made for, and when it was made.
type Preemptor struct {
	JobID  string    `json:"job_id"`
	Team   string    `json:"team"`
	TaskID string    `json:"task_id"`
	At     time.Time `json:"at"`
}

// Endpoint is an address and port a gang member advertised.
type Endpoint struct {
	Address string `json:"address"`
	Port    int    `json:"port,omitempty"`
}

// Job is a submitted job.
type Job struct {
	ID        string          `json:"id"`
	Spec      command.JobSpec `json:"spec"`
	SpecHash  string          `json:"spec_hash"`
	CreatedBy string          `json:"created_by"`
	CreatedAt time.Time       `json:"created_at"`
	UpdatedAt time.Time       `json:"updated_at"`
	TaskIDs   []string        `json:"task_ids"`
	Seq       uint64          `json:"seq"`
	// Team is the team the job runs for (empty: written before teams,
	// command.DefaultTeam's).
	Team string `json:"team,omitempty"`

	// affinity holds Spec.Affinity's rules, read once when the job is
	// created or restored (affinity.go); nil when it has none. Out of
	// line, so that a job record is 440 bytes (the 448 size class), not
	// 456 (480).
	affinity *jobAffinity
}

// jobAffinity is a job's affinity rules as parsed; never changed once
// made, so that copies of the job share it.
type jobAffinity struct{ rules []command.AffinityRule }

// rules are the job's affinity rules (nil: none).
func (j *Job) rules() []command.AffinityRule {
	if j.affinity == nil {
		return nil
	}
	return j.affinity.rules
}

// setRules keeps rules as the job's affinity rules.
func (j *Job) setRules(rules []command.AffinityRule) {
	j.affinity = nil
	if len(rules) > 0 {
		j.affinity = &jobAffinity{rules: rules}
	}
}

// Task is one unit of a job.
type Task struct {
	ID             string          `json:"id"`
	JobID          string          `json:"job_id"`
	Index          int             `json:"index"`
	Seq            uint64          `json:"seq"`
	State          string          `json:"state"`
	AttemptID      string          `json:"attempt_id,omitempty"`
	WorkerID       string          `json:"worker_id,omitempty"`
	Devices        []string        `json:"devices,omitempty"`
	LeaseSeconds   int             `json:"lease_seconds"`
	LeaseExpiresAt time.Time       `json:"lease_expires_at,omitzero"`
	ExitCode       *int            `json:"exit_code,omitempty"`
	Output         json.RawMessage `json:"output,omitempty"`
	// Artifacts are the outputs the finish listed.
	Artifacts   []command.TaskArtifact `json:"artifacts,omitempty"`
	Reason      string                 `json:"reason,omitempty"`
	SubmittedBy string                 `json:"submitted_by,omitempty"`
	ExecutedBy  string                 `json:"executed_by,omitempty"`
	// Preempt, when set, says why the current attempt was asked to stop
	// by a drain or a stop: however it ends, it ends preempted and the
	// task is requeued without using up an attempt.
	Preempt string `json:"preempt,omitempty"`
	// Checkpoint is the task's latest checkpoint (checkpoint.go).
	Checkpoint *TaskCheckpoint `json:"checkpoint,omitempty"`
	Attempts   []Attempt       `json:"attempts,omitempty"`
	CreatedAt  time.Time       `json:"created_at"`
	UpdatedAt  time.Time       `json:"updated_at"`
	LogBytes   int             `json:"log_bytes,omitempty"`
	LastLogSeq int64           `json:"last_log_seq"`

	// gen is the capture generation the task was last written in
	// (ownTask); not part of the task's state.
	gen uint64

	// The flags sit together at the end, in one word: a task record is
	// 384 bytes, a size class of its own, not 400 (in the 416 class).

	CancelRequested bool `json:"cancel_requested,omitempty"`
	// LogCut is set once the coordinators' total output bound refused
	// this task's output: its marker is stored and the rest dropped.
	LogCut bool `json:"log_cut,omitempty"`
	// frozen is set once a remembered finish holds this very record (the
	// task as that finish left it): it is never changed again, and
	// ownTask hands the next command a copy. Not part of the task's state.
	frozen bool
}

// Active reports whether the task is held by a worker.
func (t *Task) Active() bool { return t.State == taskAssigned || t.State == taskRunning }

// Running reports whether the task's attempt has started on its worker.
func (t *Task) Running() bool { return t.State == taskRunning }

// Terminal reports whether the task has ended for good.
func (t *Task) Terminal() bool {
	return t.State == taskSucceeded || t.State == taskFailed || t.State == taskCancelled
}

func (t *Task) current() *Attempt {
	if len(t.Attempts) == 0 {
		return nil
	}
	return &t.Attempts[len(t.Attempts)-1]
}

// Submission remembers a finish with a submission id: the digest of its
// body and the task as that finish left it, the outcome a replay yields.
// It is never changed once stored: captures share it.
type Submission struct {
	BodyHash string `json:"body_hash"`
	// Task is the task as the finish left it: the table's own record,
	// frozen, while the task has not changed since (the common case,
	// a finish that ended it), which costs no copy.
	Task *Task `json:"task"`
}

// MaxLogBytesPerTask bounds the output kept for one task; past it, chunks
// are dropped and one marker is stored.
const MaxLogBytesPerTask = 8 << 20
