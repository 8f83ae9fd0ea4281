package command

import "github.com/gpulayer/gpulayer/sdk/api"

// Values the commands carry as the API received them. The log keeps them
// as they came and so does the state, which names them through these
// aliases: it holds them, it never renders them (coordinator/view does).
type (
	JobSpec     = api.JobSpec
	Resources   = api.Resources
	Target      = api.Target
	Device      = api.Device
	GroupMember = api.GroupMember
	DeviceLink  = api.DeviceLink
	// ArtifactRef is one of a job's inputs; TaskArtifact one of a task's
	// uploaded outputs.
	ArtifactRef  = api.ArtifactRef
	TaskArtifact = api.TaskArtifact
	// AffinityRule is one rule of JobSpec.Affinity.
	AffinityRule = api.AffinityRule
)

// ParseAffinity reads a job's affinity rules (the API's parser: a job
// accepted at submit always parses).
func ParseAffinity(spec JobSpec) ([]AffinityRule, error) { return api.ParseAffinity(spec.Affinity) }

// SharingEnforced is the GPU sharing mode that asks for a GPU whose agent
// enforces the task's memory share (api.SharingEnforced).
const SharingEnforced = api.SharingEnforced
