package translate

import (
	"slices"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// JobSpecFromAPI reads a submitted job into the state's type.
func JobSpecFromAPI(s api.JobSpec) command.JobSpec {
	return command.JobSpec{
		Name:                   s.Name,
		Executor:               s.Executor,
		Config:                 slices.Clone(s.Config),
		Count:                  s.Count,
		Resources:              ResourcesFromAPI(s.Resources),
		Capability:             s.Capability,
		Target:                 targetFromAPI(s.Target),
		Affinity:               slices.Clone(s.Affinity),
		Spread:                 s.Spread,
		Gang:                   s.Gang,
		Preflight:              s.Preflight,
		ExclusiveWorker:        s.ExclusiveWorker,
		MaxPerWorker:           s.MaxPerWorker,
		Priority:               s.Priority,
		MaxAttempts:            s.MaxAttempts,
		LeaseSeconds:           s.LeaseSeconds,
		TimeoutSeconds:         s.TimeoutSeconds,
		Inputs:                 ArtifactRefsFromAPI(s.Inputs),
		Outputs:                slices.Clone(s.Outputs),
		IdempotencyKey:         s.IdempotencyKey,
		Parallelism:            derefInt(s.Parallelism),
		DependsOn:              convertEach(s.DependsOn, func(d api.Dependency) command.Dependency { return command.Dependency(d) }),
		Preemptible:            clonePtr(s.Preemptible),
		PreemptionGraceSeconds: clonePtr(s.PreemptionGraceSeconds),
		Checkpoint:             convertPtr(s.Checkpoint, func(v api.CheckpointSpec) command.CheckpointSpec { return command.CheckpointSpec(v) }),
	}
}

// JobSpecToAPI renders a job's spec.
func JobSpecToAPI(s command.JobSpec) api.JobSpec {
	return api.JobSpec{
		Name:                   s.Name,
		Executor:               s.Executor,
		Config:                 slices.Clone(s.Config),
		Count:                  s.Count,
		Resources:              ResourcesToAPI(s.Resources),
		Capability:             s.Capability,
		Target:                 targetToAPI(s.Target),
		Affinity:               slices.Clone(s.Affinity),
		Spread:                 s.Spread,
		Gang:                   s.Gang,
		Preflight:              s.Preflight,
		ExclusiveWorker:        s.ExclusiveWorker,
		MaxPerWorker:           s.MaxPerWorker,
		Priority:               s.Priority,
		MaxAttempts:            s.MaxAttempts,
		LeaseSeconds:           s.LeaseSeconds,
		TimeoutSeconds:         s.TimeoutSeconds,
		Inputs:                 ArtifactRefsToAPI(s.Inputs),
		Outputs:                slices.Clone(s.Outputs),
		IdempotencyKey:         s.IdempotencyKey,
		Parallelism:            positiveInt(s.Parallelism),
		DependsOn:              convertEach(s.DependsOn, func(d command.Dependency) api.Dependency { return api.Dependency(d) }),
		Preemptible:            clonePtr(s.Preemptible),
		PreemptionGraceSeconds: clonePtr(s.PreemptionGraceSeconds),
		Checkpoint:             convertPtr(s.Checkpoint, func(v command.CheckpointSpec) api.CheckpointSpec { return api.CheckpointSpec(v) }),
	}
}

// ResourcesFromAPI reads a job's resources (nil stays nil).
func ResourcesFromAPI(r *api.Resources) *command.Resources {
	return convertPtr(r, func(v api.Resources) command.Resources { return command.Resources(v) })
}

// ResourcesToAPI renders a job's resources (nil stays nil).
func ResourcesToAPI(r *command.Resources) *api.Resources {
	return convertPtr(r, func(v command.Resources) api.Resources { return api.Resources(v) })
}

// Target, Resources, ArtifactRef and the other types of one shape on both
// sides convert as Go struct conversions: a field added to one side and
// not the other stops the build here.

func targetFromAPI(t *api.Target) *command.Target {
	return convertPtr(t, func(v api.Target) command.Target { return command.Target(v) })
}

func targetToAPI(t *command.Target) *api.Target {
	return convertPtr(t, func(v command.Target) api.Target { return api.Target(v) })
}

// convertPtr converts what p points to, nil staying nil.
// clonePtr copies what p points at (nil stays nil).
func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func convertPtr[From, To any](p *From, f func(From) To) *To {
	if p == nil {
		return nil
	}
	v := f(*p)
	return &v
}

// derefInt reads an optional number (nil: 0).
func derefInt(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

// positiveInt renders a number whose 0 means absent.
func positiveInt(v int) *int {
	if v == 0 {
		return nil
	}
	return &v
}
