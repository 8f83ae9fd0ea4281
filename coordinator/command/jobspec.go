package command

import (
	"encoding/json"
	"fmt"
)

// The values the commands carry are the state's own types, not the wire's.
// They have the wire's JSON names, so a log written when they were
// aliases of sdk/api's types reads the same, but a change to sdk/api is
// no longer a change to the replicated state: coordinator/translate is
// the one place a value crosses between the two, and its tests fail when
// a field is added on one side and not the other.

// JobSpec is a job as it was accepted at submit: what to run, on what,
// how often, with which inputs and outputs.
type JobSpec struct {
	Name       string          `json:"name,omitempty"`
	Executor   string          `json:"executor"`
	Config     json.RawMessage `json:"config,omitempty"`
	Count      int             `json:"count,omitempty"`
	Resources  *Resources      `json:"resources,omitempty"`
	Capability string          `json:"capability,omitempty"`
	Target     *Target         `json:"target,omitempty"`
	// Affinity is the job's affinity rules as JSON, kept as accepted
	// (ParseAffinity reads them).
	Affinity        json.RawMessage `json:"affinity,omitempty"`
	Spread          bool            `json:"spread,omitempty"`
	Gang            bool            `json:"gang,omitempty"`
	Preflight       bool            `json:"preflight,omitempty"`
	ExclusiveWorker bool            `json:"exclusive_worker,omitempty"`
	MaxPerWorker    int             `json:"max_per_worker,omitempty"`
	Priority        int             `json:"priority,omitempty"`
	MaxAttempts     int             `json:"max_attempts,omitempty"`
	LeaseSeconds    int             `json:"lease_seconds,omitempty"`
	TimeoutSeconds  int             `json:"timeout_seconds,omitempty"`
	Inputs          []ArtifactRef   `json:"inputs,omitempty"`
	Outputs         []string        `json:"outputs,omitempty"`
	IdempotencyKey  string          `json:"idempotency_key,omitempty"`
	// Parallelism bounds how many of the job's tasks are assigned or
	// running at once (0: no bound).
	Parallelism int `json:"parallelism,omitempty"`
	// DependsOn lists the jobs this one waits for (the room
	// coordinator/state/deps).
	DependsOn []Dependency `json:"depends_on,omitempty"`
	// Preemptible (nil: true) says whether the job's tasks may be taken
	// back for another's; a job that is not runs only within its team's
	// quota.
	Preemptible *bool `json:"preemptible,omitempty"`
	// PreemptionGraceSeconds (nil: DefaultPreemptionGrace) is the time
	// between a preempted attempt's SIGTERM and its kill.
	PreemptionGraceSeconds *int `json:"preemption_grace_seconds,omitempty"`
	// Checkpoint names the path, inside the task directory, uploaded when
	// an attempt ends preempted, lost with its agent alive, or failed, and
	// staged again before the task's next attempt.
	Checkpoint *CheckpointSpec `json:"checkpoint,omitempty"`
}

// CheckpointSpec is a job's checkpoint: a path relative to the task
// directory.
type CheckpointSpec struct {
	Path string `json:"path"`
}

// DefaultPreemptionGrace is a preempted attempt's grace when its job
// names none.
const DefaultPreemptionGrace = 30

// IsPreemptible reports whether the job's tasks may be preempted.
func (s *JobSpec) IsPreemptible() bool { return s.Preemptible == nil || *s.Preemptible }

// PreemptionGrace is the job's preemption grace in seconds.
func (s *JobSpec) PreemptionGrace() int {
	if s.PreemptionGraceSeconds == nil {
		return DefaultPreemptionGrace
	}
	return *s.PreemptionGraceSeconds
}

// Asked is what the job asks of a worker's devices (its Resources), or
// nothing: the value placement keys and compares tasks by.
func (s *JobSpec) Asked() Resources {
	if s.Resources == nil {
		return Resources{}
	}
	return *s.Resources
}

// Dependency is one job a job waits for, and the way that job must end.
type Dependency struct {
	Job       string `json:"job"`
	Condition string `json:"condition"`
}

// Dependency conditions: the waited-on job ended with every task
// succeeded, ended failed, or ended at all.
const (
	DependSucceeded = "succeeded"
	DependFailed    = "failed"
	DependFinished  = "finished"
)

// MaxDependencies bounds a job's DependsOn.
const MaxDependencies = 64

// Resources is what each task of a job asks of a worker's GPUs (and the
// limits its sandbox gets).
type Resources struct {
	GPUs              int    `json:"gpus,omitempty"`
	GPUMemoryMiB      uint64 `json:"gpu_memory_mib,omitempty"`
	GPUModel          string `json:"gpu_model,omitempty"`
	ComputeCapability string `json:"compute_capability,omitempty"`
	// MIGProfile asks for MIG devices of that profile: GPUs then counts
	// MIG devices.
	MIGProfile string `json:"mig_profile,omitempty"`
	// GPUSharing, when set, asks for a share of one GPU: GPUMemoryMiB of
	// its memory (SharingEnforced: on a GPU whose agent enforces it).
	GPUSharing string  `json:"gpu_sharing,omitempty"`
	MemoryMiB  int64   `json:"memory_mib,omitempty"`
	CPUs       float64 `json:"cpus,omitempty"`
}

// SharingEnforced is the sharing mode that asks for a GPU whose agent
// enforces each task's memory share.
const SharingEnforced = "enforced"

// Shared reports whether the task asks for a share of a GPU.
func (r *Resources) Shared() bool { return r != nil && r.GPUSharing != "" }

// Partial reports whether the task asks for part of a GPU: a share or a
// MIG device (its need in GPUs depends on the device it gets).
func (r *Resources) Partial() bool { return r.Shared() || (r != nil && r.MIGProfile != "") }

// Target pins a job to one worker or group.
type Target struct {
	Kind string `json:"kind"`
	ID   string `json:"id"`
}

// The kinds of a target (and of a group member): a worker or a group.
const (
	TargetWorker = "worker"
	TargetGroup  = "group"
)

// AffinityRule is one rule of a job's affinity: a worker, group or label
// value the job prefers (Weight) or requires.
type AffinityRule struct {
	Worker   string `json:"worker,omitempty"`
	Group    string `json:"group,omitempty"`
	Label    string `json:"label,omitempty"`
	Value    string `json:"value,omitempty"`
	Weight   int    `json:"weight,omitempty"`
	Required bool   `json:"required,omitempty"`
}

// ParseAffinity reads a job's affinity rules. Submit validated them, so
// an error here means a corrupt record.
func ParseAffinity(spec JobSpec) ([]AffinityRule, error) {
	if len(spec.Affinity) == 0 || string(spec.Affinity) == "null" {
		return nil, nil
	}
	var rules []AffinityRule
	if err := json.Unmarshal(spec.Affinity, &rules); err != nil {
		return nil, fmt.Errorf("affinity: %w", err)
	}
	return rules, nil
}

// Repels reports whether the rule keeps matching workers away.
func (r AffinityRule) Repels() bool { return r.Weight < 0 }
