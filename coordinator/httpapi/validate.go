package httpapi

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/gpulayer/gpulayer/sdk/api"
)

var idPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// validateID checks a worker or group id against the grammar and the
// reserved names. "self" is reserved because /v1/workers/self is the
// worker's own route: a worker named self would shadow the admin read of
// it.
func validateID(field, id string) error {
	switch {
	case id == "admin" || id == "system" || id == "internal" || id == "self" || strings.HasPrefix(id, "_"):
		return newError(api.CodeReservedIdentifier, "%s %q is reserved", field, id)
	case !idPattern.MatchString(id):
		return invalidf("%s %s must match %s", field, shortQuote(id), idPattern.String())
	}
	return nil
}

var executorPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// Limits on job specs.
const (
	maxCount        = 10000
	maxGPUs         = 64
	maxAttempts     = 100
	maxLeaseSeconds = 3600
	maxTimeout      = 7 * 24 * 3600
	maxNameLen      = api.MaxJobNameBytes
	maxPriority     = 1000
)

func validateJobSpec(s *api.JobSpec) error {
	switch {
	case s.Executor == "":
		return invalidf("executor is required")
	case !executorPattern.MatchString(s.Executor):
		return invalidf("executor %s must match %s", shortQuote(s.Executor), executorPattern.String())
	case len(s.Name) > maxNameLen:
		return invalidf("name is longer than %d bytes", maxNameLen)
	case s.Count < 0 || s.Count > maxCount:
		return invalidf("count must be between 1 and %d", maxCount)
	case s.Priority < -maxPriority || s.Priority > maxPriority:
		return invalidf("priority must be between %d and %d", -maxPriority, maxPriority)
	case s.MaxAttempts < 0 || s.MaxAttempts > maxAttempts:
		return invalidf("max_attempts must be between 1 and %d", maxAttempts)
	case s.LeaseSeconds < 0 || s.LeaseSeconds > maxLeaseSeconds:
		return invalidf("lease_seconds must be between 1 and %d", maxLeaseSeconds)
	case s.TimeoutSeconds < 0 || s.TimeoutSeconds > maxTimeout:
		return invalidf("timeout_seconds must be between 0 and %d", maxTimeout)
	case s.MaxPerWorker < 0:
		return invalidf("max_per_worker must not be negative")
	case s.Gang && (s.Count < 2 || s.Count > api.MaxGangSize):
		return invalidf("a gang job needs count between 2 and %d", api.MaxGangSize)
	case s.Preflight && (!s.Gang || s.Resources == nil || s.Resources.GPUs < 1):
		return invalidf("preflight is for a gang job whose tasks ask for GPUs")
	}
	if err := validateJobBounds(s); err != nil {
		return err
	}
	if err := validateJobFlow(s); err != nil { // dependencies.go
		return err
	}
	if err := validatePreemption(s); err != nil { // preemption.go
		return err
	}
	if r := s.Resources; r != nil {
		if r.GPUs < 0 || r.GPUs > maxGPUs {
			return invalidf("resources.gpus must be between 0 and %d", maxGPUs)
		}
		if r.MemoryMiB < 0 || r.MemoryMiB > api.MaxTaskMemoryMiB {
			return invalidf("resources.memory_mib must be between 0 and %d", api.MaxTaskMemoryMiB)
		}
		if !(r.CPUs >= 0 && r.CPUs <= api.MaxTaskCPUs) {
			return invalidf("resources.cpus must be between 0 and %d", api.MaxTaskCPUs)
		}
		if err := validateMIGResources(r); err != nil {
			return err
		}
		if err := validateSharingResources(s); err != nil {
			return err
		}
	}
	if t := s.Target; t != nil {
		if t.Kind != api.TargetWorker && t.Kind != api.TargetGroup {
			return invalidf("target.kind must be %q or %q", api.TargetWorker, api.TargetGroup)
		}
		if err := validateID("target.id", t.ID); err != nil {
			return err
		}
	}
	rules, err := api.ParseAffinity(s.Affinity)
	if err != nil {
		return invalidf("%v", err)
	}
	for i, r := range rules {
		for field, id := range map[string]string{"worker": r.Worker, "group": r.Group} {
			if id == "" {
				continue
			}
			if err := validateID(fmt.Sprintf("affinity[%d].%s", i, field), id); err != nil {
				return err
			}
		}
	}
	if len(s.Config) > 0 {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(s.Config, &obj); err != nil || obj == nil {
			return invalidf("config must be a JSON object")
		}
	}
	if s.Executor == "exec" {
		var c api.ExecConfig
		if err := decodeStrict(s.Config, &c, false); err != nil {
			return invalidf("config for the exec executor: %v", err)
		}
		if c.Command == "" {
			return invalidf("config.command is required for the exec executor")
		}
		if err := validateExecBounds(&c); err != nil {
			return err
		}
		if err := validateExecDir(&c); err != nil {
			return err
		}
	}
	if s.Executor == api.ContainerExecutor {
		if err := validateContainerConfig(s); err != nil {
			return err
		}
	}
	return validateArtifactRefs(s)
}
