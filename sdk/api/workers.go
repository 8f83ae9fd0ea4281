package api

import (
	"encoding/json"
	"slices"
)

// Worker statuses.
const (
	WorkerPending  = "pending"
	WorkerReady    = "ready"
	WorkerDraining = "draining"
	WorkerStopping = "stopping"
	WorkerOffline  = "offline"
	WorkerRevoked  = "revoked"
)

// Worker commands carried by heartbeat and acquire answers.
const (
	CommandNone  = "none"
	CommandDrain = "drain"
	CommandStop  = "stop"
)

// CordonRequest is the body of POST /v1/workers/{id}/devices/{uuid}/cordon
// (optional): why the GPU is cordoned, shown on its record.
type CordonRequest struct {
	Reason string `json:"reason,omitempty"`
}

// MaxCordonReasonBytes bounds a cordon's reason.
const MaxCordonReasonBytes = 512

// Topology labels: a worker that carries them (its agent's --label, or
// its join token's labels) is placed near the other members of a gang.
// A gang's ranks fill the asking worker's NVLink domain, then its
// switch, then its rack, and elsewhere the switches with the most room
// first, so that a gang spans as few switches and racks as it can
// (docs/gpus.md, "Topology across nodes").
const (
	LabelNVLinkDomain = "gpulayer.io/nvlink-domain" // a multi-node NVLink fabric (GB200 NVL72 and the like)
	LabelSwitch       = "gpulayer.io/switch"        // the leaf switch of the node's network fabric
	LabelRack         = "gpulayer.io/rack"
)

// Device is one GPU a worker advertises.
type Device struct {
	Index             int    `json:"index"`
	UUID              string `json:"uuid"`
	Name              string `json:"name"`
	MemoryMiB         uint64 `json:"memory_mib"`
	DriverVersion     string `json:"driver_version,omitempty"`
	CUDAVersion       string `json:"cuda_version,omitempty"`
	ComputeCapability string `json:"compute_capability,omitempty"`
	// PCIDevice is the GPU's PCI id, "vendor:device" in lowercase hex
	// ("10de:2330"), where NVML says; the coordinator checks it against
	// the model's (docs/gpus.md, "Verified models").
	PCIDevice string `json:"pci_device,omitempty"`
	// Healthy says the device may be given work. It is true only when
	// Health is healthy or degraded or, from an agent that does not watch
	// health, empty.
	Healthy bool `json:"healthy"`
	// Health is the device's health where the agent watches it: healthy,
	// degraded (it works, with a condition; placed after healthy devices),
	// unhealthy, recovering (after a fault, in its hold-down window) or
	// unknown (its faults cannot be observed); HealthReason says why it is
	// not healthy. See docs/gpus.md.
	Health       string `json:"health,omitempty"`
	HealthReason string `json:"health_reason,omitempty"`
	// PendingApproval, in a worker's record, marks a GPU that is new
	// since the worker's inventory was approved, or whose memory changed:
	// it is given no work until an admin approves (POST
	// /v1/workers/{id}/gpus/approve). Agents do not send it.
	PendingApproval bool `json:"pending_approval,omitempty"`
	// MIGEnabled marks a GPU in MIG mode: it is given out only as its MIG
	// devices, never whole. A MIG device has Parent (its GPU's UUID,
	// parent_uuid on the wire as PROTOCOL.md names it) and MIGProfile
	// ("1g.10gb"); its UUID is the MIG-... one CUDA takes, and its Index
	// its GPU's.
	MIGEnabled bool   `json:"mig_enabled,omitempty"`
	Parent     string `json:"parent_uuid,omitempty"`
	MIGProfile string `json:"mig_profile,omitempty"`
	// LegacyParent is the name agents before the third wave gave Parent
	// ("parent"): read from them, never written. A device that carries
	// both must name one GPU.
	LegacyParent string `json:"parent,omitempty"`
	// Sharing names how the agent enforces a shared task's memory share
	// on this GPU (DeviceSharingMPS), or is empty where it cannot:
	// only tasks with gpu_sharing "unenforced" share such a GPU.
	Sharing string `json:"sharing,omitempty"`
	// Cordoned, in a worker's record, marks a GPU an admin cordoned (POST
	// /v1/workers/{id}/devices/{uuid}/cordon), with CordonReason: it is
	// given no new task, and what runs on it goes on. Agents do not send
	// them.
	Cordoned     bool   `json:"cordoned,omitempty"`
	CordonReason string `json:"cordon_reason,omitempty"`
	// MIGRequest and MIGError are the agent's word, on a GPU, about the
	// last MIG layout order it acted on (MIGLayoutOrder.Generation): its
	// generation, and why it failed (empty: applied).
	MIGRequest uint64 `json:"mig_request,omitempty"`
	MIGError   string `json:"mig_error,omitempty"`
	// NUMANode is the host NUMA node the GPU hangs off, where known.
	NUMANode *int `json:"numa_node,omitempty"`
	// Links says how the GPU reaches each other GPU of the worker, where
	// the agent could read its topology (docs/gpus.md, "Topology").
	Links []DeviceLink `json:"links,omitempty"`
}

// DeviceLink is how a GPU reaches another GPU of its worker: Path is the
// best route between them, one of the Path* words (nvidia-smi topo's
// vocabulary), and NvLinks, for an NVLink or NVSwitch path, the number
// of active links (to the peer, or for a switch the fewer of the two
// GPUs' links into the fabric).
type DeviceLink struct {
	Peer    string `json:"peer"`
	Path    string `json:"path"`
	NvLinks int    `json:"nvlinks,omitempty"`
}

// Device link paths, best first.
const (
	PathNvLink   = "nvlink"   // direct NVLinks
	PathNVSwitch = "nvswitch" // through an NVSwitch fabric
	PathBoard    = "board"    // on one board (a multi-GPU card)
	PathPIX      = "pix"      // one PCIe switch
	PathPXB      = "pxb"      // several PCIe switches
	PathPHB      = "phb"      // one PCIe host bridge
	PathNode     = "node"     // host bridges of one NUMA node
	PathSys      = "sys"      // across NUMA nodes
)

// LinkPaths lists the device link paths, best first.
var LinkPaths = []string{PathNvLink, PathNVSwitch, PathBoard, PathPIX, PathPXB, PathPHB, PathNode, PathSys}

// Device health states.
const (
	HealthHealthy    = "healthy"
	HealthUnhealthy  = "unhealthy"
	HealthRecovering = "recovering"
	HealthUnknown    = "unknown"
	// HealthDegraded: the device works but has a condition (clocks held
	// down, many corrected memory errors, memory waiting to be retired, a
	// GPU busy with no process); it is offered, after the healthy ones.
	HealthDegraded = "degraded"
)

// RegisterRequest is the body of POST /v1/workers/register.
type RegisterRequest struct {
	WorkerID     string            `json:"worker_id,omitempty"`
	Labels       map[string]string `json:"labels,omitempty"`
	Capabilities []string          `json:"capabilities,omitempty"`
	Executors    []string          `json:"executors,omitempty"`
	Devices      []Device          `json:"devices,omitempty"`
	Origin       string            `json:"origin,omitempty"`
	InstanceID   string            `json:"instance_id,omitempty"`
}

// RegisterResponse answers register: WorkerToken is set only when a new
// worker was created (201), never for an existing one (200).
type RegisterResponse struct {
	WorkerID    string  `json:"worker_id"`
	WorkerToken string  `json:"worker_token,omitempty"`
	Status      string  `json:"status"`
	Worker      *Worker `json:"worker,omitempty"`
	// ExternalWorkerKey and ClusterKey are set in answers to enroll.
	ExternalWorkerKey string `json:"external_worker_key,omitempty"`
	ClusterKey        string `json:"cluster_key,omitempty"`
}

// Worker origins: how a worker got its first credential.
const (
	OriginJoin       = "join"
	OriginProvider   = "provider"
	OriginEnrollment = "enrollment"
)

// Worker is a registered worker as the registry shows it (never a hash).
type Worker struct {
	WorkerID      string            `json:"worker_id"`
	Status        string            `json:"status"`
	Labels        map[string]string `json:"labels,omitempty"`
	Capabilities  []string          `json:"capabilities"`
	Executors     []string          `json:"executors"`
	Devices       []Device          `json:"devices"`
	RunningTasks  []string          `json:"running_tasks"`
	RegisteredAt  string            `json:"registered_at"`
	RegisteredBy  string            `json:"registered_by,omitempty"`
	LastHeartbeat string            `json:"last_heartbeat,omitempty"`
	// Groups lists every group the worker belongs to, directly or through
	// nested groups, sorted.
	Groups []string `json:"groups,omitempty"`
	// Origin is how the worker got its first credential: join, provider
	// (instance token) or enrollment (allowlist).
	Origin            string `json:"origin,omitempty"`
	InstanceID        string `json:"instance_id,omitempty"`
	ClusterKey        string `json:"cluster_key,omitempty"`
	ExternalWorkerKey string `json:"external_worker_key,omitempty"`
	// TokenID is the join or instance token the worker registered with.
	TokenID    string `json:"token_id,omitempty"`
	ApprovedBy string `json:"approved_by,omitempty"`
	ApprovedAt string `json:"approved_at,omitempty"`
	// DrainDeadline is when a draining worker's remaining tasks are
	// stopped and requeued (absent: the worker is not draining, or its
	// deadline has passed and its tasks were told to stop).
	DrainDeadline string `json:"drain_deadline,omitempty"`
	// DrainedBy names who drained or stopped the worker: an admin's
	// credential name, or "self" when the worker's agent did.
	DrainedBy string `json:"drained_by,omitempty"`
	// Deregistering: the worker asked to be forgotten once its tasks end.
	Deregistering bool `json:"deregistering,omitempty"`
	// ClearGPUs are the GPUs an admin asked to clear that the worker's
	// agent has not yet reported back in service.
	ClearGPUs []string `json:"clear_gpus,omitempty"`
	// MIGLayouts are the MIG layouts asked of the worker's GPUs, by GPU
	// (PUT /v1/workers/{id}/devices/{uuid}/mig), and how each stands.
	MIGLayouts []MIGLayout `json:"mig_layouts,omitempty"`
}

// HeartbeatRequest is the body of POST /v1/workers/self/heartbeat.
type HeartbeatRequest struct {
	RunningTaskIDs []string `json:"running_task_ids,omitempty"`
	Devices        []Device `json:"devices,omitempty"`
	Executors      []string `json:"executors,omitempty"`
	// MaxTasks is how many tasks the agent runs at once (0: not said);
	// the coordinator keeps gang placements within it.
	MaxTasks int `json:"max_tasks,omitempty"`
}

// HeartbeatResponse answers a heartbeat.
type HeartbeatResponse struct {
	// ClearGPUs names GPUs an admin took out of fault or quarantine
	// (gpulayer worker clear-gpu): the agent puts each back through its
	// hold-down window.
	ClearGPUs     []string `json:"clear_gpus,omitempty"`
	CancelTaskIDs []string `json:"cancel_task_ids"`
	// PreemptTaskIDs are those of CancelTaskIDs that were preempted, not
	// cancelled: the agent gives each its assignment's
	// PreemptionGraceSeconds between SIGTERM and the kill.
	PreemptTaskIDs  []string `json:"preempt_task_ids,omitempty"`
	LeaseExpiresAt  string   `json:"lease_expires_at,omitempty"`
	Command         string   `json:"command"`
	Revoked         bool     `json:"revoked"`
	IntervalSeconds float64  `json:"interval_seconds"`
	// MIGLayouts are MIG layouts an admin asked of the worker's GPUs that
	// its agent has yet to apply.
	MIGLayouts []MIGLayoutOrder `json:"mig_layouts,omitempty"`
	// ExecSessions are exec sessions waiting for this agent to dial
	// (exec.go).
	ExecSessions []ExecOffer `json:"exec_sessions,omitempty"`
}

// AcquireRequest is the body of POST /v1/workers/self/acquire.
type AcquireRequest struct {
	Capability      string `json:"capability,omitempty"`
	MaxLeaseSeconds int    `json:"max_lease_seconds,omitempty"`
	WaitSeconds     int    `json:"wait_seconds,omitempty"`
	// RequestID makes the call idempotent: the same id again, from the
	// same worker, while the attempt it was answered with is still that
	// worker's, gets that assignment again rather than a second task (an
	// answer lost to a timeout or a failover is not left as a ghost).
	// At most MaxKeyBytes; sdk/client sets one when it is empty.
	RequestID string `json:"request_id,omitempty"`
	// MaxTasks asks for up to this many tasks in one call (1 to
	// MaxAcquireTasks; 0 means 1): an agent with several free slots
	// fills them in one round trip. The answer's Tasks lists them.
	MaxTasks int `json:"max_tasks,omitempty"`
}

// MaxAcquireTasks bounds AcquireRequest.MaxTasks.
const MaxAcquireTasks = 64

// Assignment is a task handed to a worker by acquire.
type Assignment struct {
	ID    string `json:"id"`
	JobID string `json:"job_id"`
	Index int    `json:"index"`
	// Count is how many tasks the job has (the task sees it as
	// GPULAYER_TASK_COUNT, beside its Index as GPULAYER_TASK_INDEX).
	Count          int             `json:"count,omitempty"`
	AttemptID      string          `json:"attempt_id"`
	Attempt        int             `json:"attempt"`
	Executor       string          `json:"executor"`
	Config         json.RawMessage `json:"config,omitempty"`
	Resources      *Resources      `json:"resources,omitempty"`
	Devices        []string        `json:"devices"`
	LeaseExpiresAt string          `json:"lease_expires_at"`
	LeaseSeconds   int             `json:"lease_seconds"`
	TimeoutSeconds int             `json:"timeout_seconds,omitempty"`
	// Inputs are staged into the task's directory before it starts;
	// Outputs are the job's output globs, uploaded after it ends.
	Inputs  []ArtifactRef `json:"inputs,omitempty"`
	Outputs []string      `json:"outputs,omitempty"`
	// Gang is set for a member of a gang job: the task calls rendezvous
	// before its process starts.
	Gang *GangMember `json:"gang,omitempty"`
	// PreemptionGraceSeconds is the job's grace between SIGTERM and the
	// kill when the attempt is preempted (0: none).
	PreemptionGraceSeconds int `json:"preemption_grace_seconds,omitempty"`
	// Checkpoint is set for a job with a checkpoint path.
	Checkpoint *AssignedCheckpoint `json:"checkpoint,omitempty"`
	// Preflight asks the agent to check the task's GPUs before it starts
	// (JobSpec.Preflight).
	Preflight bool `json:"preflight,omitempty"`
}

// AcquireResponse answers acquire: a task, nothing, or a command.
type AcquireResponse struct {
	// Task is the first (or only) task handed out; Tasks, for a call with
	// max_tasks above 1, lists every one, Task first.
	Task    *Assignment  `json:"task,omitempty"`
	Tasks   []Assignment `json:"tasks,omitempty"`
	Command string       `json:"command,omitempty"`
}

// StartRequest is the body of POST /v1/tasks/{id}/start.
type StartRequest struct {
	AttemptID string `json:"attempt_id"`
	// Preflight is how the attempt's preflight went, where its job asked
	// for one: passed or skipped (a failed one ends the attempt instead).
	Preflight *PreflightReport `json:"preflight,omitempty"`
}

// LogsRequest is the body of POST /v1/tasks/{id}/logs.
type LogsRequest struct {
	AttemptID string `json:"attempt_id"`
	Stream    string `json:"stream"`
	Seq       int64  `json:"seq"`
	Data      string `json:"data"`
}

// LogsResponse answers POST /v1/tasks/{id}/logs: Accepted is false for a
// chunk already received (its seq seen before) or one past the task's
// output cap, which are dropped.
type LogsResponse struct {
	Accepted bool `json:"accepted"`
}

// FinishRequest is the body of POST /v1/tasks/{id}/finish.
type FinishRequest struct {
	AttemptID    string          `json:"attempt_id"`
	SubmissionID string          `json:"submission_id,omitempty"`
	ExitCode     int             `json:"exit_code"`
	Output       json.RawMessage `json:"output,omitempty"`
	// Artifacts are the outputs the agent uploaded (each recorded before
	// the finish is sent), at most MaxDigests adding up to at most
	// MaxTaskOutputBytes.
	Artifacts []TaskArtifact `json:"artifacts,omitempty"`
	// Reason, optional, says why the task ended as it did when the agent
	// knows better than the exit code ("timed out after 30s"). At most
	// MaxReasonBytes.
	Reason string `json:"reason,omitempty"`
	// Checkpoint is the checkpoint the agent uploaded as the attempt
	// ended, for a job with a checkpoint path.
	Checkpoint *CheckpointRef `json:"checkpoint,omitempty"`
}

// FailRequest is the body of POST /v1/tasks/{id}/fail.
type FailRequest struct {
	AttemptID string `json:"attempt_id"`
	Reason    string `json:"reason"`
	// Permanent says no retry can succeed (a command missing on the node,
	// a config the executor refuses): the task fails now, whatever
	// attempts it has left.
	Permanent bool `json:"permanent,omitempty"`
	// GPUFault names the GPU (the UUID the attempt was given) whose fault
	// ended the attempt: the agent stopped it when the GPU turned
	// unhealthy under it (an XID of a class that takes the GPU out, or
	// the GPU falling off the bus). The attempt ends lost, uses up no
	// attempt (up to MaxGPUFaultRetries of them a task), and the task is
	// placed again at once, never on that GPU. Not with Permanent.
	GPUFault string `json:"gpu_fault,omitempty"`
	// Preflight is how the attempt's preflight went, where it ran before
	// the attempt ended (a failed one ends it so).
	Preflight *PreflightReport `json:"preflight,omitempty"`
	// Checkpoint is as FinishRequest's.
	Checkpoint *CheckpointRef `json:"checkpoint,omitempty"`
}

// MaxGPUFaultRetries is how many attempts a task may lose to GPU faults
// without using up its attempts; past it such an attempt counts, so that
// no agent can hand a task back forever.
const MaxGPUFaultRetries = 3

// TaskResponse answers start, logs, finish and fail.
type TaskResponse struct {
	Task Task `json:"task"`
}

// Equal reports whether two device reports say the same.
func (d Device) Equal(o Device) bool {
	dl, ol := d.Links, o.Links
	dn, on := d.NUMANode, o.NUMANode
	d.Links, o.Links, d.NUMANode, o.NUMANode = nil, nil, nil, nil
	return d.plain() == o.plain() && slices.Equal(dl, ol) && (dn == nil) == (on == nil) && (dn == nil || *dn == *on)
}

// deviceFields is Device without its slice and pointer, comparable.
type deviceFields struct {
	Index                                         int
	UUID, Name                                    string
	MemoryMiB                                     uint64
	DriverVersion, CUDAVersion, ComputeCapability string
	Healthy                                       bool
	Health, HealthReason                          string
	MIGEnabled                                    bool
	Parent, MIGProfile, PCIDevice                 string
	Sharing                                       string
}

func (d Device) plain() deviceFields {
	return deviceFields{d.Index, d.UUID, d.Name, d.MemoryMiB, d.DriverVersion, d.CUDAVersion, d.ComputeCapability, d.Healthy, d.Health, d.HealthReason, d.MIGEnabled, d.Parent, d.MIGProfile, d.PCIDevice, d.Sharing}
}
